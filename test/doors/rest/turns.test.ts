import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createTenant, forEachDialect, request, startTestServer, type TestServer } from '../../support/server.ts';
import { eventually } from '../../support/wait.ts';

/** tern_requests_waited_turn_total, read from /metrics. */
async function waited(server: TestServer): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('tern_requests_waited_turn_total '));
  return Number(line?.split(' ')[1] ?? 0);
}

forEachDialect('turns between organisations on the HTTP doors', (dialect) => {
  let server: TestServer;
  before(async () => {
    // One request of an organisation at a time while another has some: every wait shows.
    server = await startTestServer(dialect, { TERN_ORGANISATION_CONCURRENCY: '1' });
  });
  after(() => server.stop());

  test('while another organisation has a request in progress, one organisation’s requests over REST and legacy HTTP take turns; each is answered', async () => {
    const a = await createTenant(server, { balance: 100 });
    const b = await createTenant(server, { balance: 100 });
    const admission = server.app.services.admission;
    // The other organisation has a request in progress all along, and this one a request of its own at first.
    const endOther = await admission.enter(b.organisationId);
    const endFirst = await admission.enter(a.organisationId);
    try {
      const before = await waited(server);
      const sends = Promise.all([
        ...Array.from({ length: 6 }, (_, i) =>
          request(server, 'POST', '/sms/v1/messages', {
            key: a.key,
            body: { recipient: { to: `3361200${String(i).padStart(4, '0')}5` }, body: { text: `turn ${i}` } },
          }).then((r) => {
            assert.equal(r.status, 201, r.text);
          }),
        ),
        ...Array.from({ length: 3 }, (_, i) =>
          fetch(`${server.url}/http/1.6/sendSMS.do?accessToken=${encodeURIComponent(a.key)}&message=turn&numero=3361300${String(i).padStart(4, '0')}5`)
            .then((r) => r.text())
            .then((line) => assert.match(line, /^0 \| /)),
        ),
      ]);
      // Each waits for its turn, the REST and the legacy ones alike…
      await eventually(() => admission.waiting === 9, 5_000, 'every request waiting for its turn');
      assert.equal((await waited(server)) - before, 9);
      // …and each, once answered, hands the turn to the next.
      endFirst();
      await sends;
      assert.equal(admission.waiting, 0);
    } finally {
      endFirst();
      endOther();
    }
  });

  test('a turn ends with its request, answered, refused or abandoned by its client while it waited', async () => {
    const a = await createTenant(server, { balance: 100 });
    const b = await createTenant(server, { balance: 100 });
    const admission = server.app.services.admission;
    const endOther = await admission.enter(b.organisationId);
    try {
      // Refused once their turn was taken (a bad number): the turn ends with the 400.
      for (let i = 0; i < 3; i++) {
        const r = await request(server, 'POST', '/sms/v1/messages', { key: a.key, body: { recipient: { to: 'not a number' }, body: { text: 'x' } } });
        assert.equal(r.status, 400);
      }
      // Abandoned while waiting behind a request in progress.
      const endFirst = await admission.enter(a.organisationId);
      const controllers = Array.from({ length: 5 }, () => new AbortController());
      const abandoned = controllers.map((controller, i) =>
        fetch(`${server.url}/sms/v1/messages`, {
          method: 'POST',
          headers: { 'x-api-key': a.key, 'content-type': 'application/json' },
          body: JSON.stringify({ recipient: { to: `3361400${String(i).padStart(4, '0')}5` }, body: { text: 'gone' } }),
          signal: controller.signal,
        }).catch(() => null),
      );
      await eventually(() => admission.waiting === 5, 5_000, 'the requests waiting for their turn');
      for (const c of controllers) c.abort();
      await Promise.all(abandoned);
      endFirst();
      await eventually(() => admission.waiting === 0, 5_000, 'the abandoned requests gone from the queue');
      // Nothing is left holding a turn: the organisation's next request is answered.
      const r = await request(server, 'POST', '/sms/v1/messages', { key: a.key, body: { recipient: { to: '33614999995' }, body: { text: 'still here' } } });
      assert.equal(r.status, 201, r.text);
    } finally {
      endOther();
    }
  });
});
