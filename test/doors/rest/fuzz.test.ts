import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { edgeRequestsFor, type FuzzRequest, requestsFor } from '../../support/fuzz.ts';
import { assertNoNulls } from '../../support/no-nulls.ts';
import { createTenant, forEachDialect, request, startTestServer, type Tenant, type TestServer } from '../../support/server.ts';

const RUNS_PER_OPERATION = Number(process.env.TERN_FUZZ_RUNS ?? 12);
const SEED = Number(process.env.TERN_FUZZ_SEED ?? 20261124);

forEachDialect('fuzz: every REST operation of /openapi.json', (dialect) => {
  let server: TestServer;
  let t: Tenant;
  let doc: any;
  before(async () => {
    server = await startTestServer(dialect, { TERN_SECRET_KEY: 'fuzz-secret-key-0123456789abcdef0123' });
    t = await createTenant(server, { balance: 100, channel: { fromFieldList: ['Tern', '36111'] } });
    doc = await (await fetch(`${server.url}/openapi.json`)).json();
  });
  after(() => server.stop());

  test(`edge values and random input never get a 5xx (seed ${SEED}, ${RUNS_PER_OPERATION} random requests an operation)`, async () => {
    const failures: string[] = [];
    const statuses = new Map<number, number>();
    let sent = 0;
    // Ids that exist, so changes and reads reach their handlers.
    const message = await request(server, 'POST', '/sms/v1/messages', { key: t.key, body: { recipient: { to: '33612345678' }, body: { text: 'fuzz' } } });
    const knownIds = [t.organisationId, t.channelId, t.credentialId, message.body.messageId as string];
    const send = async (r: FuzzRequest) => {
      const key = r.key === 'tenant' ? t.key : r.key === 'admin' ? server.adminKey : undefined;
      const res = await fetch(`${server.url}${r.path}${r.query ? `?${r.query}` : ''}`, {
        method: r.method,
        headers: { ...(key && { 'x-api-key': key }), ...(r.body !== undefined && { 'content-type': 'application/json' }) },
        ...(r.body !== undefined && { body: JSON.stringify(r.body) }),
      });
      // An event stream never ends: its status is what is checked.
      const text = (res.headers.get('content-type') ?? '').startsWith('text/event-stream') ? (await res.body?.cancel(), '') : await res.text();
      sent++;
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      const what = `${r.method} ${r.path}?${r.query.slice(0, 80)} ${JSON.stringify(r.body)?.slice(0, 300)}`;
      if (res.status >= 500) failures.push(`${what} → ${res.status} ${text.slice(0, 200)}`);
      // Whatever gets through answers without a null (every route of the document, with whatever input).
      if ((res.headers.get('content-type') ?? '').includes('json') && text !== '') {
        try {
          assertNoNulls(JSON.parse(text), what);
        } catch (err) {
          failures.push((err as Error).message.slice(0, 500));
        }
      }
    };
    // The tenant's own operations first; the operator's last (they may revoke the tenant's key or suspend it), deletes
    // last of all.
    const operations = Object.entries<any>(doc.paths)
      .flatMap(([path, ops]) =>
        Object.entries<any>(ops)
          .filter(([m]) => ['get', 'post', 'put', 'patch', 'delete'].includes(m))
          .map(([method, op]) => ({ path, method, op })),
      )
      .sort(
        (a, b) => Number(a.path.startsWith('/admin/')) - Number(b.path.startsWith('/admin/')) || Number(a.method === 'delete') - Number(b.method === 'delete'),
      );
    for (const { path, method, op } of operations) {
      for (const r of edgeRequestsFor(path, method, op, knownIds)) await send(r);
      await fc.assert(fc.asyncProperty(requestsFor(path, method, op, doc, knownIds), send), { seed: SEED, numRuns: RUNS_PER_OPERATION });
    }
    const seen = [...statuses]
      .sort(([a], [b]) => a - b)
      .map(([s, n]) => `${s}×${n}`)
      .join(' ');
    process.stdout.write(`# ${dialect}: ${sent} requests over ${Object.keys(doc.paths).length} paths: ${seen}\n`);
    assert.ok(
      [...statuses.keys()].some((s) => s >= 200 && s < 300),
      'some requests get through',
    );
    assert.deepEqual(failures.slice(0, 20), [], `${failures.length} answers were 5xx or held a null`);
  });
});
