// The `tern` command against a real Tern: every command through the public REST API, human output and --json, and
// exit codes that mean something. Commands run in this process (run()), the way bin/tern.js runs them.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import { run } from '../../src/cli/index.ts';
import type { Io } from '../../src/cli/io.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { createTenant, forEachDialect, freshDatabase, request, startTestServer, type Tenant, type TestServer } from '../support/server.ts';
import { eventually } from '../support/wait.ts';

interface Result {
  code: number | 'serving';
  out: string;
  err: string;
  json(): any;
}

async function tern(env: NodeJS.ProcessEnv, argv: string[], stdin = ''): Promise<Result> {
  let out = '';
  let err = '';
  const io: Io = {
    stdout: { write: (s: string) => (out += s), isTTY: false },
    stderr: { write: (s: string) => (err += s), isTTY: false },
    env,
    readStdin: async () => stdin,
  };
  const code = await run(argv, io);
  return { code, out, err, json: () => JSON.parse(out) };
}

forEachDialect('tern CLI', (dialect) => {
  let server: TestServer;
  let tenant: Tenant;
  let env: NodeJS.ProcessEnv;
  let dir: string;
  let receiver: Receiver;
  const cli = (...argv: string[]) => tern(env, argv);

  before(async () => {
    server = await startTestServer(dialect);
    tenant = await createTenant(server, { balance: 20, channel: { defaultFromField: 'Tern' } });
    dir = mkdtempSync(join(tmpdir(), 'tern-cli-'));
    env = { TERN_URL: server.url, TERN_API_KEY: tenant.key, TERN_ADMIN_KEY: server.adminKey, TERN_PROFILE: join(dir, 'profile.json'), NO_COLOR: '1' };
    receiver = await startReceiver();
  });
  after(async () => {
    await receiver.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists every command in --help, and answers wrong usage with 2', async () => {
    const help = await tern({}, ['--help']);
    assert.equal(help.code, 0);
    for (const c of ['serve', 'login', 'send', 'messages', 'campaign', 'lookup', 'consumption', 'balance', 'transfer', 'keys', 'webhooks', 'smpp', 'admin', 'migrate', 'doctor']) {
      assert.match(help.out, new RegExp(`^  ${c}\\b`, 'm'), c);
    }
    assert.match(help.out, /Exit codes:/);
    for (const sub of [['send'], ['messages', 'tail'], ['campaign', 'send'], ['admin', 'prices', 'set'], ['smpp', 'credentials', 'create']]) {
      const r = await tern({}, [...sub, '--help']);
      assert.equal(r.code, 0, sub.join(' '));
      assert.match(r.out, /^Usage: tern /m);
    }
    const unknown = await tern({}, ['sned']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.err, /unknown command 'sned'/);
    assert.equal((await tern({}, ['send', '33612345678'])).code, 2);
  });

  it('says what is missing: no key (3), a refused key (3), no Tern at the URL (6)', async () => {
    const none = await tern({ TERN_URL: server.url, TERN_PROFILE: join(dir, 'none.json') }, ['balance']);
    assert.equal(none.code, 3);
    assert.match(none.err, /no API key: set TERN_API_KEY/);
    const bad = await tern({ ...env, TERN_API_KEY: 'tern_not_a_key' }, ['balance']);
    assert.equal(bad.code, 3);
    assert.match(bad.err, /401\.002/);
    const down = await tern({ ...env, TERN_URL: 'http://127.0.0.1:9' }, ['balance']);
    assert.equal(down.code, 6);
    assert.match(down.err, /does not answer at http:\/\/127\.0\.0\.1:9/);
  });

  it('logs in with a key read from standard input, into a profile only its owner reads', async () => {
    const profileEnv = { TERN_PROFILE: join(dir, 'login.json'), NO_COLOR: '1' };
    const r = await tern(profileEnv, ['login', '--url', server.url], `${tenant.key}\n`);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /Signed in to .* SMS channel/);
    assert.equal(statSync(profileEnv.TERN_PROFILE).mode & 0o777, 0o600);
    const admin = await tern(profileEnv, ['login', '--admin'], server.adminKey);
    assert.equal(admin.code, 0, admin.err);
    const balance = await tern(profileEnv, ['balance', '--json']);
    assert.equal(balance.code, 0, balance.err);
    assert.equal(balance.json().organisation.organisationId, tenant.organisationId);
    assert.equal((await tern(profileEnv, ['admin', 'prices', 'list', '--json'])).code, 0);
    assert.equal((await tern(profileEnv, ['login', '--url', server.url], 'tern_wrong')).code, 3);
    assert.match((await tern(profileEnv, ['logout'])).out, /Removed/);
  });

  it('sends and waits for the final status: 0 when delivered, 7 when not', async () => {
    const ok = await cli('send', '33612345678', 'Hello from the CLI', '--wait', '--ref', 'cli-1');
    assert.equal(ok.code, 0, ok.err);
    assert.match(ok.out, /^Sent \S+ to 33612345678: ENROUTE, 1 part, 0\.045 €$/m);
    assert.match(ok.out, /^Final: \S+ to 33612345678: DELIVERED/m);
    const rejected = await cli('send', '33612340002', 'no', '--wait', '--json');
    assert.equal(rejected.code, 7, rejected.err);
    assert.equal(rejected.json().status.value, 'UNDELIVERABLE');
    const json = await cli('send', '33612345678', 'json please', '--json', '--idempotency-key', 'cli-key-1');
    const again = await cli('send', '33612345678', 'json please', '--json', '--idempotency-key', 'cli-key-1');
    assert.equal(json.json().messageId, again.json().messageId);
    const invalid = await cli('send', 'not-a-number', 'x');
    assert.equal(invalid.code, 1);
    assert.match(invalid.err, /400\.003: body\.recipient\.to/);
  });

  it('lists, reads and follows messages', async () => {
    const list = await cli('messages', 'list', '--ref', 'cli-1', '--json');
    assert.equal(list.code, 0, list.err);
    const [m] = list.json();
    assert.equal(m.refClient, 'cli-1');
    const human = await cli('messages', 'list', '--limit', '3');
    assert.match(human.out, /DELIVERED/);
    const get = await cli('messages', 'get', m.messageId);
    assert.match(get.out, /^Timeline:\n.*ENROUTE\n.*DELIVERED/m);
    assert.equal((await cli('messages', 'get', '01a2aaaa-0000-7000-8000-000000000000')).code, 4);

    const tail = cli('messages', 'tail', '--json', '--max', '2');
    await new Promise((r) => setTimeout(r, 300));
    const sent = await request(server, 'POST', '/sms/v1/messages', { key: tenant.key, body: { recipient: { to: '33612345671' }, body: { text: 'tailed' } } });
    const followed = await tail;
    assert.equal(followed.code, 0, followed.err);
    const events = followed.out.trim().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual(events.map((e) => [e.message.messageId, e.status]), [[sent.body.messageId, 'ENROUTE'], [sent.body.messageId, 'DELIVERED']]);
  });

  it('sends a campaign file, reports refused rows (8), and resumes without sending twice', async () => {
    const file = join(dir, 'campaign.csv');
    writeFileSync(file, 'number;refClient\n33612345001;a\n+33 6 12 34 50 02;b\nnot-a-number;c\n33612345004;d\n');
    const first = await cli('campaign', 'send', file, '--text', 'Sale today', '--json');
    assert.equal(first.code, 8, first.err);
    const s = first.json();
    assert.equal(s.rows, 4);
    assert.equal(s.sent, 3);
    assert.deepEqual(s.refused.map((r: any) => r.line), [4]);
    assert.match(s.refused[0].error, /^400\.003/);
    const again = await cli('campaign', 'send', file, '--text', 'Sale today', '--json');
    assert.equal(again.json().campaignId, s.campaignId);
    assert.equal(again.json().sent, 0);
    assert.equal(again.json().alreadySent, 3);
    const messages = await request(server, 'GET', `/sms/v1/campaigns/${s.campaignId}/messages?pageSize=100`, { key: tenant.key });
    assert.equal(messages.body.items.length, 3);
    const human = await cli('campaign', 'send', file, '--text', 'Sale today');
    assert.match(human.out, /^Refused\s+1$/m);
    assert.match(human.out, /line 4 \(not-a-number\): 400\.003/);
    const noText = await cli('campaign', 'send', file);
    assert.equal(noText.code, 2);
  });

  it('looks numbers up, one or a file of them', async () => {
    const one = await cli('lookup', '33612345678', '--json');
    assert.equal(one.code, 0, one.err);
    assert.equal(one.json().isoCountryCode, 'FR');
    const file = join(dir, 'numbers.txt');
    writeFileSync(file, 'number\n33612345678\n4915112345678\nhello\n');
    const bulk = await cli('lookup', '--file', file, '--json');
    assert.equal(bulk.code, 8);
    assert.deepEqual(bulk.json().map((x: any) => Boolean(x.error)), [false, false, true]);
    const table = await cli('lookup', '33612345678', '4915112345678');
    assert.match(table.out, /France/);
    assert.match(table.out, /Germany/);
  });

  it('shows consumption, balance, and moves funds to a sub-organisation', async () => {
    const consumption = await cli('consumption', '--json');
    assert.ok(consumption.json().length > 0);
    const chart = await cli('consumption', '--by', 'day', '--chart');
    assert.match(chart.out, /^\d{4}-\d{2}-\d{2} █+.* €$/m);
    assert.equal((await cli('consumption', '--by', 'week')).code, 2);
    const sub = await createTenant(server, { parentOrganisationId: tenant.organisationId, name: 'Sub' });
    const before = (await cli('balance', '--json')).json().organisation.balance.amount;
    const moved = await cli('transfer', '2.5', '--to', sub.organisationId);
    assert.equal(moved.code, 0, moved.err);
    assert.match(moved.out, /Moved 2\.50 € from Test org to Sub/);
    const after = (await cli('balance', '--json')).json().organisation.balance.amount;
    assert.equal(Math.round((before - after) * 1e6), 2_500_000);
    const human = await cli('balance');
    assert.match(human.out, /^Balance\s+\d+\.\d+ €$/m);
    assert.match(human.out, /TRANSFER/);
    assert.equal((await cli('transfer', '1000000', '--to', sub.organisationId)).code, 5);
  });

  it('creates, lists and revokes keys and SMPP credentials', async () => {
    const created = await cli('keys', 'create', 'reporting', '--role', 'user', '--json');
    assert.equal(created.code, 0, created.err);
    const key = created.json();
    assert.deepEqual(key.roles, ['USER']);
    assert.match((await cli('keys', 'list')).out, /reporting/);
    assert.equal((await cli('keys', 'revoke', key.credentialId)).code, 0);
    assert.equal((await tern({ ...env, TERN_API_KEY: key.value }, ['balance'])).code, 3);
    const systemId = `cli${dialect.slice(0, 2)}${Date.now() % 100000}`;
    const smpp = await cli('smpp', 'credentials', 'create', systemId, '--password', 'pw123', '--json');
    assert.equal(smpp.code, 0, smpp.err);
    assert.match((await cli('smpp', 'credentials', 'list')).out, new RegExp(systemId));
    assert.match((await cli('smpp', 'sessions')).out, /No SMPP session bound/);
    assert.equal((await cli('smpp', 'credentials', 'create', 'x', '--password', 'far-too-long-for-smpp')).code, 1);
    assert.equal((await cli('smpp', 'credentials', 'delete', smpp.json().smppCredentialId)).code, 0);
  });

  it('lists webhook deliveries and replays one', async () => {
    const sent = await cli('send', '33612345678', 'hooked', '--callback', `${receiver.url}/hook`, '--json');
    const id = sent.json().messageId;
    const deliveries = await eventually(async () => {
      const r = await cli('webhooks', 'deliveries', '--message', id, '--json');
      const items = r.json();
      return items.length > 0 && items.every((d: any) => d.status === 'DELIVERED') ? items : undefined;
    });
    const before = receiver.requests.length;
    const replay = await cli('webhooks', 'replay', deliveries[0].deliveryId);
    assert.equal(replay.code, 0, replay.err);
    await eventually(() => receiver.requests.length > before, 5_000, 'the replayed delivery');
    // Delivered again: its state is DELIVERED once the answer is recorded.
    await eventually(async () => /DELIVERED/.test((await cli('webhooks', 'deliveries', '--status', 'delivered')).out), 5_000, 'the delivered list');
  });

  it('runs the operator commands', async () => {
    const org = await cli('admin', 'organisations', 'create', 'Acme', '--country', 'BE', '--channel', 'sms', '--json');
    assert.equal(org.code, 0, org.err);
    const { organisation, channel, credential } = org.json();
    assert.equal(organisation.defaultCountry, 'BE');
    assert.match((await cli('admin', 'organisations', 'list')).out, /Acme/);
    assert.match((await cli('admin', 'channels', organisation.organisationId)).out, /SMS/);
    assert.match((await cli('admin', 'credit', organisation.organisationId, '5')).out, /Credited 5\.00 €: the balance is 5\.00 €/);
    assert.equal((await cli('admin', 'prices', 'set', 'sms', 'BE', '0.07')).code, 0);
    assert.ok((await cli('admin', 'prices', 'list', '--json')).json().some((p: any) => p.country === 'BE' && p.amount === 0.07));
    const sent = await tern({ ...env, TERN_API_KEY: credential.value }, ['send', '0470123456', 'hallo', '--json']);
    assert.equal(sent.json().price.amount, 0.07);
    assert.match((await cli('admin', 'connectors')).out, /simulator/);
    assert.match((await cli('admin', 'routes', 'list')).out, /simulator/);
    assert.equal((await cli('admin', 'routes', 'test', '33612345678', '--json')).json().recipient, '33612345678');
    const key = await cli('admin', 'keys', 'create', channel.channelId, '--json');
    assert.equal(key.json().channel.channelId, channel.channelId);
    assert.equal((await tern({ ...env, TERN_ADMIN_KEY: 'wrong-operator-key-0000' }, ['admin', 'connectors'])).code, 3);
  });

  it('migrates a database and checks the installation', async () => {
    const db = await freshDatabase(dialect);
    try {
      const dbEnv = { ...env, TERN_DATABASE_URL: db.url, TERN_SECRET_KEY: 'x'.repeat(32), TERN_HTTP_PORT: '0', TERN_SMPP_PORT: '0' };
      const first = await tern(dbEnv, ['migrate']);
      assert.equal(first.code, 0, first.err);
      assert.match(first.out, /^Applied \d+ migration\(s\)/m);
      const again = await tern(dbEnv, ['migrate', '--json']);
      assert.deepEqual(again.json().applied, []);
      const doctor = await tern(dbEnv, ['doctor', '--json']);
      assert.equal(doctor.code, 0, doctor.out + doctor.err);
      const checks = doctor.json();
      assert.match(checks.find((c: any) => c.name === 'database').detail, /up to date/);
      assert.equal(checks.find((c: any) => c.name === 'PostgreSQL').ok, true);
      const broken = await tern({ ...dbEnv, TERN_HTTP_PORT: 'eighty' }, ['doctor']);
      assert.equal(broken.code, 1);
      assert.match(broken.out, /✗ configuration/);
      if (dialect === 'postgres') {
        const down = await tern({ ...dbEnv, TERN_DATABASE_URL: 'postgres://postgres@127.0.0.1:9/none' }, ['doctor']);
        assert.equal(down.code, 1);
        assert.match(down.out, /✗ PostgreSQL/);
        assert.match(down.out, /→ start PostgreSQL/);
      }
    } finally {
      await db.cleanup();
    }
  });
});

it('runs as the package’s bin', () => {
  const r = spawnSync(process.execPath, ['bin/tern.js', 'doctor', '--help'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^Usage: tern doctor/m);
  const bad = spawnSync(process.execPath, ['bin/tern.js', 'balance'], { encoding: 'utf8', env: { PATH: process.env.PATH, HOME: tmpdir(), TERN_PROFILE: join(tmpdir(), 'tern-no-profile.json') } });
  assert.equal(bad.status, 3);
});
