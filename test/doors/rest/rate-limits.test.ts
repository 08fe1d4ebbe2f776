import assert from 'node:assert/strict';
import { after, afterEach, before, test } from 'node:test';
import { SmppStatus } from '../../../src/protocols/smpp/pdu.ts';
import { call, packageClient } from '../../support/smpp.ts';
import { assertError, createTenant, forEachDialect, request, startTestServer, type Tenant, type TestServer } from '../../support/server.ts';
import { eventually, sleep } from '../../support/wait.ts';

/** Waits for the start of a second, so a burst falls in one window of the limits. */
async function startOfSecond(): Promise<void> {
  await sleep(1_000 - (Date.now() % 1_000) + 5);
}

forEachDialect('traffic limits', (dialect) => {
  let server: TestServer;
  let t: Tenant;
  before(async () => {
    server = await startTestServer(dialect, { TERN_RATE_LIMITS: 'send=5/8,read=50/100', TERN_AUTH_FAILURES_PER_MINUTE: '5' });
    t = await createTenant(server, { balance: 100 });
  });
  after(() => server.stop());
  // A test that fails midway leaves no lockout to the next.
  afterEach(async () => {
    await server.app.store.db.deleteFrom('auth_lockouts').execute();
  });

  const send = (key: string) => request(server, 'POST', '/sms/v1/messages', { key, body: { recipient: { to: '33612345678' }, body: { text: 'limits' } } });
  /**
   * Requests made one after the other within one clock second (the limits' window): only such a burst says
   * something of a limit a second, and a loaded machine may take longer than a second for it; tried again then.
   */
  const burst = async <T>(n: number, one: (i: number) => Promise<T>): Promise<T[]> => {
    for (let attempt = 1; ; attempt++) {
      await startOfSecond();
      const started = Date.now();
      const answers: T[] = [];
      for (let i = 0; i < n; i++) answers.push(await one(i));
      if (Math.floor(started / 1000) === Math.floor(Date.now() / 1000)) return answers;
      assert.ok(attempt < 8, `${n} requests within one second (the last try took ${Date.now() - started} ms)`);
      await sleep(1_000);
    }
  };

  test('every answer says what is left; past the limit a key gets 429 with Retry-After, until the window ends', async () => {
    const answers = await burst(7, () => send(t.key));
    assert.deepEqual(
      answers.map((a) => a.status),
      [201, 201, 201, 201, 201, 429, 429],
    );
    assert.equal(answers[0]!.headers.get('ratelimit-limit'), '5');
    assert.equal(answers[0]!.headers.get('ratelimit-remaining'), '4');
    assert.ok(['0', '1'].includes(answers[0]!.headers.get('ratelimit-reset')!));
    assertError(answers[5]!, 429, '429.001', /more than 5 send requests a second with this key/);
    assert.equal(answers[5]!.headers.get('retry-after'), '1');
    assert.equal(answers[5]!.headers.get('ratelimit-remaining'), '0');
    const reads = await request(server, 'GET', '/sms/v1/messages', { key: t.key });
    assert.equal(reads.status, 200, 'reads have their own limit');
    assert.equal(reads.headers.get('ratelimit-limit'), '50');
    await sleep(1_000);
    assert.equal((await send(t.key)).status, 201, 'the next window');
  });

  test('an organisation’s keys share its own limit; the operator can give it its own limits', async () => {
    const second = await request(server, 'POST', `/admin/v1/channels/${t.channelId}/credentials`, {
      key: server.adminKey,
      body: { name: 'second key', roles: ['ADMIN'] },
    });
    assert.equal(second.status, 201, second.text);
    const statuses = await burst(10, async (i) => (await send(i % 2 === 0 ? t.key : second.body.value)).status);
    assert.equal(statuses.filter((s) => s === 201).length, 8, `8 a second for the organisation: ${statuses.join(' ')}`);
    assertError(
      await request(server, 'PUT', `/admin/v1/organisations/${t.organisationId}/rate-limits`, {
        key: server.adminKey,
        body: { send: { perKey: 0, perOrganisation: 1 } },
      }),
      400,
      '400.001',
      /body\.send\.perKey/,
    );
    const put = await request(server, 'PUT', `/admin/v1/organisations/${t.organisationId}/rate-limits`, {
      key: server.adminKey,
      body: { send: { perKey: 20, perOrganisation: 30 } },
    });
    assert.equal(put.status, 200, put.text);
    assert.deepEqual(put.body.send, { perKey: 20, perOrganisation: 30 });
    assert.deepEqual(put.body.read, { perKey: 50, perOrganisation: 100 }, 'the others keep the defaults');
    const more = await burst(12, async () => (await send(t.key)).status);
    assert.deepEqual([...new Set(more)], [201]);
  });

  test('an address that keeps failing to authenticate is locked out, longer each time; keys it used before still work', async () => {
    const other = await createTenant(server, { balance: 1 });
    assert.equal((await request(server, 'GET', '/sms/v1/messages', { key: t.key })).status, 200, 't.key is known good from here');
    // Five failures a minute are let through; the sixth locks the address out.
    for (let i = 0; i < 6; i++) assert.equal((await request(server, 'GET', '/sms/v1/messages', { key: `wrong-${i}` })).status, 401);
    const locked = await request(server, 'GET', '/sms/v1/messages', { key: 'wrong-again' });
    assertError(locked, 429, '429.001', /too many failed authentications from/);
    assert.ok(Number(locked.headers.get('retry-after')) > 50);
    assert.equal(
      (await request(server, 'GET', '/sms/v1/messages', { key: other.key })).status,
      429,
      'a valid key not seen from here is refused too: guessing learns nothing',
    );
    assert.equal((await request(server, 'GET', '/sms/v1/messages', { key: t.key })).status, 200, 'a key seen working from here goes on');
    const legacy = await request(server, 'GET', `/http/1.6/credit.do?accessToken=wrong`);
    assert.equal(legacy.status, 429);
    assert.match(legacy.text, /^35 \| /);
    assert.ok(legacy.headers.get('retry-after'));
    // The lockout ends; the next burst locks it out twice as long.
    const db = server.app.store.db;
    await db
      .updateTable('auth_lockouts')
      .set({ locked_until: Date.now() - 1 })
      .where('address', '=', '127.0.0.1')
      .execute();
    await sleep(1_100);
    for (let i = 0; i < 6; i++) await request(server, 'GET', '/sms/v1/messages', { key: `wrong-${i}` });
    const row = await db.selectFrom('auth_lockouts').selectAll().where('address', '=', '127.0.0.1').executeTakeFirstOrThrow();
    assert.equal(row.strikes, 2);
    assert.ok(Number(row.locked_until) - Date.now() > 100_000, 'two minutes');
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    assert.match(metrics, /tern_auth_lockouts_total\{door="rest"\} [1-9]/);
    assert.match(metrics, /tern_rate_limited_total\{group="send"\} [1-9]/);
    await db.deleteFrom('auth_lockouts').execute();
    await sleep(1_100);
  });

  test('SMPP: wrong passwords lock out the address that sent them (and it with the system_id), never the account elsewhere', async () => {
    const cred = await request(server, 'POST', `/admin/v1/channels/${t.channelId}/smpp-credentials`, {
      key: server.adminKey,
      body: { systemId: 'guessed', password: 'right1' },
    });
    assert.equal(cred.status, 201, cred.text);
    const bind = async (from: string, password: string) => {
      const s = await packageClient(server.smppPort, { localAddress: from });
      try {
        return (await call(s, 'bind_transceiver', { system_id: 'guessed', password })).command_status;
      } finally {
        s.destroy();
      }
    };
    // Wrong passwords from many addresses, a few each, more than the limit in all: no address is locked out, nor the
    // account, so its owner binds from wherever it binds.
    const spread = await Promise.all(['127.0.0.4', '127.0.0.5', '127.0.0.6', '127.0.0.7'].flatMap((from) => [1, 2, 3].map((i) => bind(from, `spread${i}`))));
    assert.deepEqual([...new Set(spread)], [SmppStatus.ESME_RINVPASWD]);
    assert.equal(await bind('127.0.0.3', 'right1'), SmppStatus.ESME_ROK, '12 wrong passwords from four addresses lock nothing out');

    // One address past the limit (5 a minute here): it is locked out, the right password from it too.
    const guesses = await Promise.all(Array.from({ length: 6 }, (_, i) => bind('127.0.0.2', `guess${i}`)));
    assert.ok(
      guesses.every((s) => s === SmppStatus.ESME_RINVPASWD || s === SmppStatus.ESME_RBINDFAIL),
      guesses.join(' '),
    );
    await eventually(async () => (await bind('127.0.0.2', `guess-more`)) === SmppStatus.ESME_RBINDFAIL, 5_000, 'the guessing address locked out');
    assert.equal(await bind('127.0.0.2', 'right1'), SmppStatus.ESME_RBINDFAIL, 'even the right password, from the address locked out');
    assert.equal(await bind('127.0.0.3', 'right1'), SmppStatus.ESME_ROK, 'the right password from another address binds');
    const rows = await server.app.store.db
      .selectFrom('auth_lockouts')
      .select(['address', 'strikes'])
      .where('address', 'like', '%127.0.0.%')
      .orderBy('address')
      .execute();
    assert.deepEqual(
      rows.map((r) => r.address),
      ['127.0.0.2', 'smpp:127.0.0.2|guessed'],
      'the address and the pair; no system_id alone, no other address',
    );
    assert.equal((await request(server, 'GET', '/sms/v1/messages', { key: t.key })).status, 200, 'the REST address of the test is not locked out');
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    assert.match(
      metrics,
      /tern_auth_lockouts_total\{door="smpp"\} [1-9]/,
      metrics
        .split('\n')
        .filter((l) => l.includes('auth_'))
        .join('\n'),
    );
    await server.app.store.db.deleteFrom('auth_lockouts').execute();
  });
});

forEachDialect('traffic limits across nodes', (dialect) => {
  test('two nodes on one database share a key’s limit', { skip: dialect === 'sqlite' ? 'one SQLite database has one node' : false }, async () => {
    const first = await startTestServer(dialect, { TERN_RATE_LIMITS: 'send=10/1000' });
    const second = await startTestServer(dialect, { TERN_RATE_LIMITS: 'send=10/1000', TERN_DATABASE_URL: first.app.config.databaseUrl });
    try {
      const t = await createTenant(first, { balance: 100 });
      for (let attempt = 0; ; attempt++) {
        await startOfSecond();
        const started = Date.now();
        const answers = await Promise.all(
          Array.from({ length: 30 }, (_, i) =>
            request(i % 2 === 0 ? first : second, 'POST', '/sms/v1/messages', {
              key: t.key,
              body: { recipient: { to: '33612345678' }, body: { text: `n${i}` } },
            }),
          ),
        );
        // Only a burst that stayed inside one window says something.
        if (Math.floor(started / 1000) !== Math.floor(Date.now() / 1000)) {
          assert.ok(attempt < 5, 'a burst inside one second');
          continue;
        }
        const ok = answers.filter((a) => a.status === 201).length;
        assert.ok(ok <= 10, `${ok} accepted in one second by two nodes, for a limit of 10`);
        assert.ok(ok >= 5, `${ok} accepted`);
        break;
      }
    } finally {
      await second.stop();
      await first.stop();
    }
  });
});
