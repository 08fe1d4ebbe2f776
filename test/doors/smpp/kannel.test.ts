// Interoperability with Kannel, the ESME operators actually run: bearerbox + smsbox bound to Tern as a transceiver.
// A message sent through Kannel's sendsms reaches Tern and Kannel's dlr-url is called with the final status; an MO
// injected into Tern reaches Kannel's sms-service URL.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type Receiver, startReceiver } from '../../support/receiver.ts';
import { createTenant, request, startTestServer, type Tenant, type TestServer } from '../../support/server.ts';
import { eventually } from '../../support/wait.ts';

const BEARERBOX = '/usr/sbin/bearerbox';
const SMSBOX = '/usr/sbin/smsbox';
const installed = existsSync(BEARERBOX) && existsSync(SMSBOX);
if (!installed) console.warn('*** kannel not installed (apt-get install kannel): the Kannel interoperability test is SKIPPED ***');

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/** What Kannel called on the receiver (its dlr-url and its sms-service get-url), by path and query. */
function kannelCalls(r: Receiver): Array<{ path: string; query: URLSearchParams }> {
  return r.requests.map((request) => {
    const u = new URL(request.url, 'http://127.0.0.1');
    return { path: u.pathname, query: u.searchParams };
  });
}

interface Kannel {
  dir: string;
  sendsmsPort: number;
  adminPort: number;
  processes: ChildProcess[];
}

function kannelConfig(o: {
  dir: string;
  tern: number;
  systemId: string;
  password: string;
  adminPort: number;
  boxPort: number;
  sendsmsPort: number;
  receiver: number;
}): string {
  return `
group = core
admin-port = ${o.adminPort}
admin-password = admin
admin-allow-ip = "127.0.0.1"
smsbox-port = ${o.boxPort}
box-allow-ip = "127.0.0.1"
log-file = "${join(o.dir, 'bearerbox.log')}"
log-level = 1
access-log = "${join(o.dir, 'access.log')}"
dlr-storage = internal

group = smsc
smsc = smpp
smsc-id = tern
host = 127.0.0.1
port = ${o.tern}
transceiver-mode = true
smsc-username = "${o.systemId}"
smsc-password = "${o.password}"
system-type = ""
enquire-link-interval = 30
reconnect-delay = 1

group = smsbox
bearerbox-host = 127.0.0.1
bearerbox-port = ${o.boxPort}
sendsms-port = ${o.sendsmsPort}
log-file = "${join(o.dir, 'smsbox.log')}"
log-level = 1

group = sendsms-user
username = tester
password = foobar
user-allow-ip = "127.0.0.1"

group = sms-service
keyword = default
catch-all = true
max-messages = 0
get-url = "http://127.0.0.1:${o.receiver}/mo?from=%p&to=%P&text=%a"
`;
}

function logsOf(k: Kannel | undefined): string {
  if (!k) return '';
  return ['bearerbox.log', 'smsbox.log']
    .map((f) => {
      const p = join(k.dir, f);
      return existsSync(p) ? `--- ${f}\n${readFileSync(p, 'utf8').split('\n').slice(-40).join('\n')}` : '';
    })
    .join('\n');
}

let server: TestServer;
let receiver: Receiver;
let kannel: Kannel | undefined;
let tenant: Tenant;
const systemId = 'kannel';
const password = 'kpass1';

before(async () => {
  if (!installed) return;
  server = await startTestServer('sqlite');
  receiver = await startReceiver(); // its answers' bodies are never sent back: the sms-service has max-messages = 0
  tenant = await createTenant(server, { balance: 10, channel: { defaultFromField: '36180', fromFieldList: ['36180', 'ACME'] } });
  const cred = await request(server, 'POST', `/admin/v1/channels/${tenant.channelId}/smpp-credentials`, {
    key: server.adminKey,
    body: { systemId, password },
  });
  assert.equal(cred.status, 201, cred.text);

  const dir = mkdtempSync(join(tmpdir(), 'tern-kannel-'));
  const adminPort = await freePort();
  const boxPort = await freePort();
  const sendsmsPort = await freePort();
  const conf = join(dir, 'kannel.conf');
  writeFileSync(conf, kannelConfig({ dir, tern: server.smppPort, systemId, password, adminPort, boxPort, sendsmsPort, receiver: receiver.port }));
  kannel = { dir, sendsmsPort, adminPort, processes: [] };
  const bearerbox = spawn(BEARERBOX, [conf], { stdio: 'ignore' });
  kannel.processes.push(bearerbox);
  // smsbox needs bearerbox's box port to be open.
  await eventually(
    async () =>
      new Promise<true | undefined>((resolve) => {
        const s = net.connect(boxPort, '127.0.0.1');
        s.once('connect', () => {
          s.destroy();
          resolve(true);
        });
        s.once('error', () => resolve(undefined));
      }),
    15_000,
    `bearerbox listening${logsOf(kannel)}`,
  );
  kannel.processes.push(spawn(SMSBOX, [conf], { stdio: 'ignore' }));
  // Kannel's SMSC connection is bound to Tern as a transceiver, and smsbox takes requests.
  await eventually(
    async () => {
      const metrics = await (await fetch(`${server.url}/metrics`)).text();
      return new RegExp(`tern_smpp_binds_total\\{system_id="${systemId}",mode="transceiver"\\} 1`).test(metrics) ? true : undefined;
    },
    15_000,
    'Kannel bound as a transceiver',
  );
  await eventually(
    async () => {
      const r = await fetch(`http://127.0.0.1:${sendsmsPort}/cgi-bin/sendsms`).catch(() => null);
      return r ? true : undefined;
    },
    15_000,
    'smsbox listening',
  );
});

after(async () => {
  if (kannel) {
    for (const p of kannel.processes) {
      if (p.exitCode === null && p.signalCode === null) {
        const exited = new Promise((resolve) => p.once('exit', resolve));
        p.kill('SIGTERM');
        const timer = setTimeout(() => p.kill('SIGKILL'), 3_000);
        await exited;
        clearTimeout(timer);
      }
    }
    rmSync(kannel.dir, { recursive: true, force: true });
  }
  await receiver?.close();
  await server?.stop();
});

test('Kannel: sendsms reaches Tern and the dlr-url gets the final status; an MO reaches the sms-service URL', { timeout: 30_000 }, async (t) => {
  if (!installed) {
    t.skip('kannel not installed');
    return;
  }
  try {
    const dlrUrl = `http://127.0.0.1:${receiver.port}/dlr?status=%d&smscid=%F&to=%p&answer=%A`;
    const qs = new URLSearchParams({
      username: 'tester',
      password: 'foobar',
      from: 'ACME',
      to: '33612345678',
      text: 'Hello from Kannel',
      'dlr-mask': '3',
      'dlr-url': dlrUrl,
    });
    const sent = await fetch(`http://127.0.0.1:${kannel!.sendsmsPort}/cgi-bin/sendsms?${qs}`);
    const sentText = await sent.text();
    assert.ok(sent.status === 202 || sent.status === 200, `sendsms: ${sent.status} ${sentText}`);

    // The message is in Tern, like any other.
    const m = await eventually(
      async () => {
        const r = await request(server, 'GET', '/sms/v1/messages', { key: tenant.key });
        return r.body.items.find((x: any) => x.body.text === 'Hello from Kannel');
      },
      15_000,
      'the message in Tern',
    );
    assert.equal(m.recipient.to, '33612345678');
    assert.equal(m.from, 'ACME');
    const row = await server.app.store.db.selectFrom('messages').selectAll().where('id', '=', m.messageId).executeTakeFirstOrThrow();
    assert.equal(row.source, 'SMPP');
    assert.equal(row.registered_delivery & 0x03, 1, `Kannel asked for a receipt (registered_delivery 0x${row.registered_delivery.toString(16)})`);

    // Kannel got the receipt, matched it to its message and called the dlr-url with "delivered" (1).
    const dlr = await eventually(async () => kannelCalls(receiver).find((c) => c.path === '/dlr' && c.query.get('status') === '1'), 15_000, 'the dlr-url call');
    assert.equal(dlr.query.get('smscid'), m.messageId);
    assert.match(dlr.query.get('answer') ?? '', /stat:DELIVRD/);
    const final = await request(server, 'GET', `/sms/v1/messages/${m.messageId}`, { key: tenant.key });
    assert.equal(final.body.status.value, 'DELIVERED');
    await eventually(
      async () => {
        const rows = await server.app.store.db.selectFrom('smpp_outbox').select('id').execute();
        return rows.length === 0 ? true : undefined;
      },
      5_000,
      'receipt removed from the outbox once Kannel answered',
    );

    // An MO injected into Tern for the channel's number reaches Kannel's sms-service.
    const mo = await request(server, 'POST', '/admin/v1/simulator/mo', {
      key: server.adminKey,
      body: { from: '33698765432', to: '36180', text: 'Reply from the handset' },
    });
    assert.equal(mo.status, 202);
    const got = await eventually(async () => kannelCalls(receiver).find((c) => c.path === '/mo'), 15_000, 'the sms-service call');
    // Kannel writes an international number (TON 1) with a +.
    assert.equal(got.query.get('from'), '+33698765432');
    assert.equal(got.query.get('to'), '36180');
    assert.equal(got.query.get('text'), 'Reply from the handset');
  } catch (err) {
    console.error(logsOf(kannel));
    throw err;
  }
});
