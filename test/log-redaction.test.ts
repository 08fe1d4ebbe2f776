// No secret in any log line: the redaction of fields, headers and URLs, then real servers — one in this process
// logging at trace, one `tern serve` process logging JSON at debug — driven through operations that handle keys,
// passwords and secrets, whose every log line is searched for each secret the test made or sent.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, test } from 'node:test';
import { REDACTED, redactUrl } from '../src/log-redaction.ts';
import { admin, connector, route } from './support/connectors.ts';
import { LogCapture } from './support/logs.ts';
import { freePort, TERN_MAIN } from './support/process.ts';
import { startReceiver } from './support/receiver.ts';
import { createTenant, forEachDialect, request, startTestServer, TEST_ADMIN_KEY, TEST_SECRET_KEY, type TestServer, UNLIMITED } from './support/server.ts';
import { call, packageClient } from './support/smpp.ts';
import { eventually } from './support/wait.ts';

const random = (prefix: string) => `${prefix}${randomBytes(12).toString('hex')}`;

describe('redactUrl', () => {
  it('censors the values of secret query parameters, whatever their case or encoding, and keeps the rest', () => {
    assert.equal(
      redactUrl('/http/1.6/sendSMS.do?accessToken=tern_abc&numero=0612345678&message=hi'),
      `/http/1.6/sendSMS.do?accessToken=${REDACTED}&numero=0612345678&message=hi`,
    );
    assert.equal(
      redactUrl('/x?ACCESSTOKEN=a&Pass=b&newPass=c&password=d&apiKey=e&api_key=f&token=g&secret=h&key=i&access_token=j'),
      `/x?${'ACCESSTOKEN Pass newPass password apiKey api_key token secret key access_token'
        .split(' ')
        .map((n) => `${n}=${REDACTED}`)
        .join('&')}`,
    );
    assert.equal(redactUrl('/x?access%54oken=tern_abc&a=1'), `/x?access%54oken=${REDACTED}&a=1`);
    assert.equal(redactUrl('/x?accessToken&accessToken=1'), `/x?accessToken=${REDACTED}&accessToken=${REDACTED}`);
    assert.equal(redactUrl('/sms/v1/messages?page=2&searchBy[status]=DELIVERED'), '/sms/v1/messages?page=2&searchBy[status]=DELIVERED');
    assert.equal(redactUrl('/healthz'), '/healthz');
    assert.equal(redactUrl('/x?'), '/x?');
  });

  it('censors a whole query whose names cannot be read', () => {
    assert.equal(redactUrl('/x?%E0%A4%A=1&accessToken=tern_abc'), `/x?${REDACTED}`);
  });
});

describe("the server's loggers", () => {
  it('censor secret fields at the top level and one level down, credential headers, and URLs of requests', () => {
    const logs = new LogCapture('trace');
    logs.logger.info(
      {
        apiKey: 'k1',
        operatorKey: 'k2',
        accessToken: 'k3',
        connector: { password: 'k4', webhookSecret: 'k5', apiKey: 'k6' },
        channel: { webhookSecret: 'k7', webhookSecretPrevious: 'k8' },
        headers: { 'x-api-key': 'k9', authorization: 'Bearer k10' },
        err: Object.assign(new Error('upstream refused'), { headers: { authorization: 'Basic k11', cookie: 'session=k12' } }),
        req: {
          method: 'GET',
          url: '/http/1.6/credit.do?accessToken=k13&pass=k14',
          ip: '127.0.0.1',
          headers: { 'x-api-key': 'k15', cookie: 'k16', 'proxy-authorization': 'k17', 'user-agent': 'curl/8' },
        },
      },
      'something happened',
    );
    const text = logs.lines.join('\n');
    for (let i = 1; i <= 17; i++) assert.ok(!new RegExp(`\\bk${i}\\b`).test(text), `k${i} is in the log: ${text}`);
    const [record] = logs.records();
    assert.equal(record!.req.headers['user-agent'], 'curl/8', 'other headers are kept');
    assert.equal(record!.req.url, `/http/1.6/credit.do?accessToken=${REDACTED}&pass=${REDACTED}`);
    assert.equal(record!.err.message, 'upstream refused');
  });
});

/** Every secret a scenario makes or sends, to be looked for in the logs. */
class Secrets {
  readonly values = new Set<string>();
  add(...values: Array<string | undefined | null>): void {
    for (const v of values) if (typeof v === 'string' && v.length >= 8) this.values.add(v);
  }
  /** The secrets found in `text`, each shortened (the assertion message is itself printed). */
  foundIn(text: string): string[] {
    return [...this.values].filter((v) => text.includes(v)).map((v) => `${v.slice(0, 6)}…`);
  }
}

/** The doors' failed authentications: wrong keys every way a client can send one. */
async function failedAuthentications(server: { url: string }, secrets: Secrets): Promise<void> {
  const wrongKey = random('tern_wrong');
  const bearer = random('bearer');
  const cookie = random('cookie');
  secrets.add(wrongKey, bearer, cookie);
  assert.equal((await request(server, 'GET', '/commons/v1/channels', { key: wrongKey })).status, 401);
  assert.equal(
    (await request(server, 'GET', '/commons/v1/channels', { headers: { authorization: `Bearer ${bearer}`, cookie: `session=${cookie}` } })).status,
    401,
  );
  assert.equal((await request(server, 'GET', '/admin/v1/organisations', { key: wrongKey })).status, 401);
  const legacy = await request(server, 'GET', `/http/1.6/credit.do?accessToken=${wrongKey}`);
  assert.match(legacy.text, /^32 \| /);
}

forEachDialect('No secret in the logs of a server at trace level', (dialect) => {
  test('keys, SMPP passwords, webhook and connector secrets, accessToken URLs and credential headers are in no log line', { timeout: 180_000 }, async () => {
    const logs = new LogCapture('trace');
    const secrets = new Secrets();
    secrets.add(TEST_ADMIN_KEY, TEST_SECRET_KEY);
    const hooks = await startReceiver();
    let server: TestServer | undefined;
    try {
      server = await startTestServer(dialect, { TERN_TRUST_PROXY: 'true' }, { logger: logs.logger });
      const s = server;

      // Organisations, channels and keys through the admin API; a key sent as X-Api-Key, and as the legacy accessToken.
      const t = await createTenant(s, { balance: 1_000_000, channel: { defaultCallbackUrlStatus: `${hooks.url}/status` } });
      secrets.add(t.key);
      const extra = await admin(s, 'POST', `/admin/v1/channels/${t.channelId}/credentials`, { name: 'second', roles: ['USER'] });
      assert.equal(extra.status, 201);
      secrets.add(extra.body.value);
      const hookSecret = await request(s, 'GET', `/commons/v1/channels/${t.channelId}/webhook-secret`, { key: t.key });
      const rotated = await request(s, 'POST', `/commons/v1/channels/${t.channelId}/webhook-secret/rotate`, { key: t.key });
      secrets.add(hookSecret.body.secret, rotated.body.secret, rotated.body.previousSecret);
      assert.ok(secrets.values.has(hookSecret.body.secret) && secrets.values.has(rotated.body.secret));

      const sent = await request(s, 'POST', '/sms/v1/messages', {
        key: t.key,
        body: { recipient: { to: '33612345678' }, body: { text: 'hello' } },
        headers: { authorization: `Bearer ${t.key}`, 'x-forwarded-for': '203.0.113.9' },
      });
      assert.equal(sent.status, 201, sent.text);
      const legacy = await request(s, 'GET', `/http/1.6/sendSMS.do?accessToken=${t.key}&message=hi&numero=0612345678`);
      assert.match(legacy.text, /^0 \| /);
      const form = await request(s, 'POST', '/http/1.6/credit.do', {
        rawBody: `accessToken=${encodeURIComponent(t.key)}`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      assert.match(form.text, /^\d/);

      // A sub-account with a login and password (legacy), a wrong password, and a key made for it.
      const login = random('sub');
      const password = random('pw-');
      secrets.add(password);
      const created = await request(s, 'GET', `/http/1.6/createSubAccount.do?accessToken=${t.key}&newPseudo=${login}&newPass=${password}`);
      assert.match(created.text, /^0 \| /, created.text);
      assert.match((await request(s, 'GET', `/http/1.6/credit.do?pseudo=${login}&pass=${password}`)).text, /^\d/);
      const wrongPass = random('wrongpass-');
      secrets.add(wrongPass);
      assert.match((await request(s, 'GET', `/http/1.6/credit.do?pseudo=${login}&pass=${wrongPass}`)).text, /^32 \| /);
      const authorisation = await request(s, 'GET', `/http/2.0/createAuthorisation.do?accessToken=${t.key}`);
      assert.equal(authorisation.status, 200, authorisation.text);
      secrets.add(authorisation.body.accessToken);

      await failedAuthentications(s, secrets);

      // SMPP: a credential with a password, a bind with it, a bind with a wrong one.
      const smppPassword = random('p').slice(0, 8);
      secrets.add(smppPassword);
      const smppTenant = await createTenant(s, { balance: 1_000_000, channel: { defaultFromField: 'ACME' } });
      secrets.add(smppTenant.key);
      const systemId = random('esme').slice(0, 15);
      const credential = await admin(s, 'POST', `/admin/v1/channels/${smppTenant.channelId}/smpp-credentials`, { systemId, password: smppPassword });
      assert.equal(credential.status, 201, credential.text);
      const session = await packageClient(s.smppPort);
      const wrongSmpp = random('w').slice(0, 8);
      secrets.add(wrongSmpp);
      assert.notEqual((await call(session, 'bind_transceiver', { system_id: systemId, password: wrongSmpp })).command_status, 0);
      session.close();
      const bound = await packageClient(s.smppPort);
      assert.equal((await call(bound, 'bind_transceiver', { system_id: systemId, password: smppPassword })).command_status, 0);
      assert.equal((await call(bound, 'submit_sm', { source_addr: 'ACME', destination_addr: '33612345678', short_message: 'over smpp' })).command_status, 0);

      // Connectors with secrets: this server's own SMPP door as an operator (a second credential), and its own REST API
      // as an smsmode-compatible upstream (a key of a third organisation, and a webhook secret).
      const upstream = await createTenant(s, { balance: 1_000_000, channel: { defaultFromField: 'ACME' } });
      secrets.add(upstream.key);
      const loopPassword = random('l').slice(0, 8);
      secrets.add(loopPassword);
      assert.equal(
        (await admin(s, 'POST', `/admin/v1/channels/${upstream.channelId}/smpp-credentials`, { systemId: 'loopback', password: loopPassword })).status,
        201,
      );
      const connectorHookSecret = `whsec_${randomBytes(24).toString('base64')}`;
      secrets.add(connectorHookSecret, connectorHookSecret.slice('whsec_'.length));
      await connector(s, {
        name: 'self-smpp',
        type: 'SMPP',
        host: '127.0.0.1',
        port: s.smppPort,
        systemId: 'loopback',
        password: loopPassword,
        reconnectMinSeconds: 1,
        reconnectMaxSeconds: 2,
      });
      await connector(s, {
        name: 'self-http',
        type: 'SMSMODE_HTTP',
        baseUrl: s.url,
        apiKey: upstream.key,
        webhookSecret: connectorHookSecret,
        pollAfterSeconds: 1,
      });
      const viaSmpp = await createTenant(s, { balance: 1_000_000 });
      const viaHttp = await createTenant(s, { balance: 1_000_000 });
      secrets.add(viaSmpp.key, viaHttp.key);
      await route(s, { name: 'via self smpp', priority: 1, match: { channelId: viaSmpp.channelId }, connectors: [{ connector: 'self-smpp' }] });
      await route(s, { name: 'via self http', priority: 1, match: { channelId: viaHttp.channelId }, connectors: [{ connector: 'self-http' }] });
      await eventually(
        async () =>
          (await admin(s, 'GET', '/admin/v1/connectors')).body.items?.filter((c: any) => ['self-smpp', 'self-http'].includes(c.name) && c.live?.state === 'UP')
            .length === 2,
        20_000,
        'both connectors up',
      );
      for (const [tenant, name] of [
        [viaSmpp, 'via self smpp'],
        [viaHttp, 'via self http'],
      ] as const) {
        const r = await request(s, 'POST', '/sms/v1/messages', { key: tenant.key, body: { recipient: { to: '33612345678' }, body: { text: name } } });
        assert.equal(r.status, 201, r.text);
        await eventually(
          async () =>
            (await request(s, 'GET', `/sms/v1/messages/${r.body.messageId}`, { key: tenant.key })).body.status.value === 'DELIVERED' ? true : undefined,
          30_000,
          `${name}: DELIVERED`,
        );
      }
      // The webhook of the first send, signed with the channel's secret.
      await eventually(
        () => hooks.delivered().find((h) => h.json?.messageId === sent.body.messageId && h.json?.status?.value === 'DELIVERED'),
        20_000,
        'the status webhook',
      );
      bound.close();
    } finally {
      await server?.stop();
      await hooks.close();
    }

    const text = logs.lines.join('\n');
    assert.ok(logs.lines.length > 50, `the scenario was logged (${logs.lines.length} lines)`);
    assert.ok(text.includes(`accessToken=${REDACTED}`), 'a legacy URL was logged, its accessToken censored');
    assert.ok(
      logs.records().some((r) => r.req?.headers?.['x-api-key'] === REDACTED),
      'an X-Api-Key header was logged, censored',
    );
    assert.ok(
      logs.records().some((r) => r.req?.headers?.authorization === REDACTED),
      'an Authorization header was logged, censored',
    );
    assert.deepEqual(secrets.foundIn(text), [], 'secrets found in the log');
  });
});

describe('No secret in the logs of `tern serve` in JSON at debug level', () => {
  test('the keys of the first start, and those made and sent after it, are in no line of its output', { timeout: 120_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tern-no-secrets-'));
    const port = await freePort();
    const smppPort = await freePort();
    const child = spawn(process.execPath, [TERN_MAIN, 'serve', '--demo'], {
      env: {
        ...process.env,
        TERN_HTTP_HOST: '127.0.0.1',
        TERN_HTTP_PORT: String(port),
        TERN_SMPP_HOST: '127.0.0.1',
        TERN_SMPP_PORT: String(smppPort),
        TERN_DATABASE_URL: `sqlite:${join(dir, 'tern.db')}`,
        TERN_SECRET_KEY: '',
        TERN_ADMIN_KEY: '',
        TERN_LOG_FORMAT: 'json',
        TERN_LOG_LEVEL: 'debug',
        TERN_RATE_LIMITS: UNLIMITED,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const secrets = new Secrets();
    const server = { url: `http://127.0.0.1:${port}` };
    try {
      await eventually(() => /credentials/.test(output) && output.endsWith('\n'), 60_000, 'the start-up output');
      const keysFile = readdirSync(dir).find((f) => f.startsWith('keys-'));
      assert.ok(keysFile, 'the keys file');
      const keys = readFileSync(join(dir, keysFile), 'utf8');
      const operatorKey = /^Operator key .*: (\S+)$/m.exec(keys)![1]!;
      const demoKeys = [...keys.matchAll(/key \(shown once, keep it\): (\S+)$/gm)].map((m) => m[1]!);
      assert.equal(demoKeys.length, 3);
      secrets.add(operatorKey, ...demoKeys, readFileSync(join(dir, 'secret.key'), 'utf8').trim());

      const adminServer = { url: server.url, adminKey: operatorKey };
      const t = await createTenant(adminServer, { balance: 1_000_000 });
      secrets.add(t.key);
      const sent = await request(server, 'POST', '/sms/v1/messages', {
        key: demoKeys[0],
        body: { recipient: { to: '0612345678' }, body: { text: 'hello' } },
        headers: { authorization: `Bearer ${t.key}` },
      });
      assert.equal(sent.status, 201, sent.text);
      assert.match((await request(server, 'GET', `/http/1.6/sendSMS.do?accessToken=${t.key}&message=hi&numero=0612345678`)).text, /^0 \| /);
      const secret = await request(server, 'GET', `/commons/v1/channels/${t.channelId}/webhook-secret`, { key: t.key });
      secrets.add(secret.body.secret);
      await failedAuthentications(server, secrets);

      const smppPassword = random('p').slice(0, 8);
      secrets.add(smppPassword);
      assert.equal(
        (await admin(adminServer, 'POST', `/admin/v1/channels/${t.channelId}/smpp-credentials`, { systemId: 'esme-log', password: smppPassword })).status,
        201,
      );
      const session = await packageClient(smppPort);
      assert.equal((await call(session, 'bind_transceiver', { system_id: 'esme-log', password: smppPassword })).command_status, 0);
      session.close();
      const wrong = await packageClient(smppPort);
      const wrongPassword = random('w').slice(0, 8);
      secrets.add(wrongPassword);
      assert.notEqual((await call(wrong, 'bind_transceiver', { system_id: 'esme-log', password: wrongPassword })).command_status, 0);
      wrong.close();
    } finally {
      child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    }
    const lines = output.trim().split('\n');
    for (const line of lines) assert.doesNotThrow(() => JSON.parse(line), `not a JSON line: ${line}`);
    assert.ok(
      lines.some((l) => l.includes(`accessToken=${REDACTED}`)),
      'the legacy request was logged, censored',
    );
    assert.ok(
      lines.some((l) => /"msg":"stopped"/.test(l)),
      'the output runs to the end',
    );
    assert.deepEqual(secrets.foundIn(output), [], 'secrets found in the output');
  });
});
