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
    for (const c of [
      'serve',
      'login',
      'send',
      'messages',
      'campaign',
      'lookup',
      'consumption',
      'balance',
      'transfer',
      'keys',
      'webhooks',
      'smpp',
      'admin',
      'migrate',
      'doctor',
      'completion',
    ]) {
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
    const events = followed.out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      events.map((e) => [e.message.messageId, e.status]),
      [
        [sent.body.messageId, 'ENROUTE'],
        [sent.body.messageId, 'DELIVERED'],
      ],
    );
  });

  it('sends a campaign file, reports refused rows (8), and resumes without sending twice', async () => {
    const file = join(dir, 'campaign.csv');
    writeFileSync(file, 'number;refClient\n33612345001;a\n+33 6 12 34 50 02;b\nnot-a-number;c\n33612345004;d\n');
    const first = await cli('campaign', 'send', file, '--text', 'Sale today', '--json');
    assert.equal(first.code, 8, first.err);
    const s = first.json();
    assert.equal(s.rows, 4);
    assert.equal(s.sent, 3);
    assert.deepEqual(
      s.refused.map((r: any) => r.line),
      [4],
    );
    assert.match(s.refused[0].error, /^400\.003/);
    const again = await cli('campaign', 'send', file, '--text', 'Sale today', '--json');
    assert.equal(again.json().campaignId, s.campaignId);
    assert.equal(again.json().sent, 0);
    assert.equal(again.json().alreadySent, 3);
    const messages = await request(server, 'GET', `/sms/v1/campaigns/${s.campaignId}/messages?pageSize=100`, { key: tenant.key });
    assert.equal(messages.body.items.length, 3);
    const human = await cli('campaign', 'send', file, '--text', 'Sale today');
    assert.match(human.out, /^Refused\s+1 \(400\.003 1\)$/m);
    assert.match(human.out, /line 4 \(not-a-number\): 400\.003/);
    const noText = await cli('campaign', 'send', file);
    assert.equal(noText.code, 2);
  });

  it('sends a template campaign file: each row rendered from its columns, a row without a value refused naming the variable', async () => {
    const tpl = await request(server, 'POST', `/sms/v1/channels/${tenant.channelId}/templates`, {
      key: tenant.key,
      body: { name: `cli-${Date.now()}`, text: 'Hi {{firstName|there}}, {{offer}}' },
    });
    assert.equal(tpl.status, 201, tpl.text);
    const file = join(dir, 'template-campaign.csv');
    writeFileSync(file, 'number;firstName;offer;segment\n33612345101;Ada;-20%;a\n33612345102;;-10%;b\n33612345103;Bob;;c\n');
    const sent = await cli('campaign', 'send', file, '--template', tpl.body.templateId, '--json');
    assert.equal(sent.code, 8, sent.err);
    const s = sent.json();
    assert.deepEqual([s.rows, s.sent], [3, 2]);
    assert.deepEqual(
      s.refused.map((r: any) => r.line),
      [4],
    );
    assert.match(s.refused[0].error, /^400\.001: body\.template\.values\.offer: .*no value for the variable offer/);
    const messages = await request(server, 'GET', `/sms/v1/campaigns/${s.campaignId}/messages?pageSize=100`, { key: tenant.key });
    assert.deepEqual(messages.body.items.map((m: any) => m.body.text).sort(), ['Hi Ada, -20%', 'Hi there, -10%']);
    assert.equal((await cli('campaign', 'send', file, '--template', tpl.body.templateId, '--text', 'x')).code, 2);
  });

  it('looks numbers up, one or a file of them', async () => {
    const one = await cli('lookup', '33612345678', '--json');
    assert.equal(one.code, 0, one.err);
    assert.equal(one.json().isoCountryCode, 'FR');
    const file = join(dir, 'numbers.txt');
    writeFileSync(file, 'number\n33612345678\n4915112345678\nhello\n');
    const bulk = await cli('lookup', '--file', file, '--json');
    assert.equal(bulk.code, 8);
    assert.deepEqual(
      bulk.json().map((x: any) => Boolean(x.error)),
      [false, false, true],
    );
    const table = await cli('lookup', '33612345678', '4915112345678');
    assert.match(table.out, /France/);
    assert.match(table.out, /Germany/);
  });

  it('prints tab-separated lines when piped, boxed tables or JSON with --output, and reads national numbers', async () => {
    const piped = await cli('lookup', '33612345678', '4915112345678');
    assert.equal(piped.code, 0, piped.err);
    const lines = piped.out.trimEnd().split('\n');
    assert.deepEqual(lines[0]!.split('\t'), ['number', 'valid', 'type', 'country', 'network', 'live']);
    assert.deepEqual(
      lines.slice(1).map((l) => l.split('\t').slice(0, 4)),
      [
        ['33612345678', 'yes', 'MOBILE', 'France'],
        ['4915112345678', 'yes', 'MOBILE', 'Germany'],
      ],
    );
    assert.ok(!/[│┌─]/.test(piped.out));
    const boxed = await cli('--output', 'table', 'lookup', '33612345678');
    assert.match(boxed.out, /┌/);
    assert.match(boxed.out, /│ 33612345678/);
    const tsv = await cli('lookup', '33612345678', '--output', 'tsv');
    assert.equal(tsv.out.split('\n')[0], 'number\tvalid\ttype\tcountry\tnetwork\tlive');
    const asJson = await cli('--output', 'json', 'lookup', '33612345678');
    assert.equal(asJson.json().isoCountryCode, 'FR');
    assert.equal((await cli('--output', 'xml', 'lookup', '33612345678')).code, 2);
    assert.equal((await cli('--output', 'json', 'logout')).code, 2);

    // A national number is read in the organisation's country, as tern send reads it.
    const national = await createTenant(server, { balance: 1 });
    const set = await request(server, 'PATCH', `/admin/v1/organisations/${national.organisationId}`, { key: server.adminKey, body: { defaultCountry: 'FR' } });
    assert.equal(set.status, 200, set.text);
    const looked = await tern({ ...env, TERN_API_KEY: national.key }, ['lookup', '0612345678', '--json']);
    assert.equal(looked.code, 0, looked.err);
    assert.equal(looked.json().msisdn, '33612345678');
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
    // A person's data: exported, then erased (their message stays for accounting, its text goes).
    await eventually(
      async () => (await cli('admin', 'export-number', organisation.organisationId, '32470123456')).json().messages[0]?.status?.value === 'DELIVERED',
    );
    const exported = (await cli('admin', 'export-number', organisation.organisationId, '0470123456')).json();
    assert.deepEqual(
      exported.messages.map((m: any) => m.body.text),
      ['hallo'],
    );
    const erasure = await cli('admin', 'erase-number', organisation.organisationId, '+32470123456', '--json');
    assert.equal(erasure.code, 0, erasure.err);
    assert.equal(erasure.json().rows.messages, 1);
    assert.match((await cli('admin', 'erase-number', organisation.organisationId, '32470123456')).out, /\nmessages\t0\n/);
    assert.equal((await cli('admin', 'erase-number', organisation.organisationId, 'nope')).code, 1);
    // Belgium has no default window; the operator sets one, then drops it.
    assert.match((await cli('admin', 'window', 'show', organisation.organisationId)).out, /off \(the default\)/);
    const win = await cli(
      'admin',
      'window',
      'set',
      organisation.organisationId,
      '--day',
      'mon-fri=09:00-18:00',
      '--day',
      'saturday=closed',
      '--calendar',
      'none',
      '--holiday',
      '2027-07-21',
      '--ramp',
      '5',
      '--json',
    );
    assert.equal(win.code, 0, win.err);
    const w = win.json();
    assert.deepEqual(
      [w.enabled, w.hours.monday, w.hours.friday, w.hours.saturday, w.holidayCalendar, w.holidays, w.rampPerSecond],
      [true, { from: '09:00', to: '18:00' }, { from: '09:00', to: '18:00' }, undefined, 'NONE', ['2027-07-21'], 5],
    );
    assert.match((await cli('admin', 'window', 'show', organisation.organisationId)).out, /saturday\s+.*closed/);
    assert.equal((await cli('admin', 'window', 'set', organisation.organisationId, '--day', 'someday=09:00-10:00')).code, 2);
    assert.notEqual((await cli('admin', 'window', 'set', organisation.organisationId, '--ramp', '0')).code, 0);
    assert.match((await cli('admin', 'window', 'reset', organisation.organisationId)).out, /off \(the default\)/);
    // The sender registry: asked for, refused while pending, approved for Belgium only, rejected, removed.
    const orgId = organisation.organisationId;
    const added = await cli('admin', 'sender', 'add', orgId, 'PROMO', '--country', 'be,fr', '--json');
    assert.equal(added.code, 0, added.err);
    assert.deepEqual([added.json().status, added.json().kind, added.json().countries], ['PENDING', 'ALPHANUMERIC', ['BE', 'FR']]);
    const fromPromo = (to: string) =>
      request(server, 'POST', '/sms/v1/messages', { key: credential.value, body: { recipient: { to }, body: { text: 'hallo' }, from: 'PROMO' } });
    assert.equal((await fromPromo('32470123456')).body.errorCode, '400.005', 'a pending sender is refused');
    const approved = await cli('admin', 'sender', 'approve', orgId, 'PROMO', '--country', 'BE');
    assert.equal(approved.code, 0, approved.err);
    assert.match(approved.out, /Sender PROMO \(ALPHANUMERIC, [0-9a-f-]{36}\) approved: APPROVED, BE\./);
    assert.equal((await fromPromo('32470123456')).status, 201);
    assert.equal((await fromPromo('33612345678')).body.errorCode, '400.005', 'not approved for France');
    assert.match((await cli('admin', 'sender', 'list', orgId)).out, /\tPROMO\tALPHANUMERIC\tBE\tAPPROVED\t/);
    const id = added.json().senderId;
    assert.match((await cli('admin', 'sender', 'reject', orgId, id)).out, /rejected: REJECTED/);
    assert.equal((await fromPromo('32470123456')).body.errorCode, '400.005', 'a rejected sender is refused');
    // Bad input: an unknown sender, a bad country, a sender that is not one, a second registration.
    const unknown = await cli('admin', 'sender', 'approve', orgId, 'NOPE');
    assert.equal(unknown.code, 4, unknown.out);
    assert.match(unknown.err, /no sender "NOPE"/);
    const badCountry = await cli('admin', 'sender', 'add', orgId, 'SHOP', '--country', 'XX');
    assert.notEqual(badCountry.code, 0);
    assert.match(badCountry.err, /countries\[0\]/);
    assert.notEqual((await cli('admin', 'sender', 'add', orgId, 'far too long a name')).code, 0);
    assert.equal((await cli('admin', 'sender', 'add', orgId, 'PROMO')).code, 5, 'already registered');
    assert.match((await cli('admin', 'sender', 'remove', orgId, 'PROMO')).out, /Sender PROMO \([0-9a-f-]{36}\) removed from the registry\./);
    assert.deepEqual((await cli('admin', 'sender', 'list', orgId, '--json')).json(), []);
    assert.equal((await cli('admin', 'sender', 'remove', orgId, id)).code, 4, 'gone');
    assert.match((await cli('admin', 'connectors')).out, /simulator/);
    assert.match((await cli('admin', 'routes', 'list')).out, /simulator/);
    assert.equal((await cli('admin', 'routes', 'test', '33612345678', '--json')).json().recipient, '33612345678');
    const key = await cli('admin', 'keys', 'create', channel.channelId, '--json');
    assert.equal(key.json().channel.channelId, channel.channelId);
    assert.equal((await tern({ ...env, TERN_ADMIN_KEY: 'wrong-operator-key-0000' }, ['admin', 'connectors'])).code, 3);
  });

  it('creates, changes and removes connectors and routes, by name or id', async () => {
    const created = await cli('admin', 'connectors', 'create', 'sim-cli', 'simulator', '--set', 'tps=50', '--set', 'receiptLatencyMs=5', '--json');
    assert.equal(created.code, 0, created.err);
    const c = created.json();
    assert.deepEqual([c.name, c.type, c.enabled], ['sim-cli', 'SIMULATOR', true]);
    assert.match((await cli('admin', 'connectors', 'list')).out, /sim-cli/);
    const bad = await cli('admin', 'connectors', 'create', 'sim-bad', 'simulator', '--set', 'colour=blue');
    assert.equal(bad.code, 1);
    assert.match(bad.err, /colour/);
    assert.equal((await cli('admin', 'connectors', 'create', 'sim-bad', 'simulator', '--set', 'novalue')).code, 2);
    const changed = await cli('admin', 'connectors', 'set', 'sim-cli', '--set', 'tps=20', '--unset', 'receiptLatencyMs', '--json');
    assert.equal(changed.code, 0, changed.err);
    assert.equal(changed.json().connectorId, c.connectorId);
    assert.equal((await cli('admin', 'connectors', 'set', 'sim-cli')).code, 2);
    assert.equal((await cli('admin', 'connectors', 'set', 'no-such-connector', '--disable')).code, 4);

    const route = await cli(
      'admin',
      'routes',
      'create',
      'uk-cli',
      '--connector',
      'sim-cli=3',
      '--failover',
      'simulator',
      '--prefix',
      '4479',
      '--type',
      'sms',
      '--priority',
      '5',
      '--json',
    );
    assert.equal(route.code, 0, route.err);
    const r = route.json();
    assert.deepEqual([r.priority, r.match, r.connectors[0].weight, r.failover[0].name], [5, { prefix: '4479', type: 'SMS' }, 3, 'simulator']);
    const routed = await cli('admin', 'routes', 'test', '447911123456', '--json');
    assert.equal(routed.code, 0, routed.err);
    assert.equal(routed.json().route, 'uk-cli');
    assert.equal((await cli('admin', 'routes', 'create', 'no-connector')).code, 2);
    const moved = await cli('admin', 'routes', 'set', r.routeId, '--priority', '7', '--disable', '--json');
    assert.equal(moved.code, 0, moved.err);
    assert.deepEqual([moved.json().priority, moved.json().enabled], [7, false]);
    // A connector a route uses cannot go; once the route is removed, it can.
    assert.equal((await cli('admin', 'connectors', 'remove', 'sim-cli')).code, 5);
    assert.match((await cli('admin', 'routes', 'remove', 'uk-cli')).out, /Route uk-cli removed/);
    assert.match((await cli('admin', 'connectors', 'remove', c.connectorId)).out, /Connector sim-cli removed/);
    assert.doesNotMatch((await cli('admin', 'connectors')).out, /sim-cli/);
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
  const bad = spawnSync(process.execPath, ['bin/tern.js', 'balance'], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH, HOME: tmpdir(), TERN_PROFILE: join(tmpdir(), 'tern-no-profile.json') },
  });
  assert.equal(bad.status, 3);
});
