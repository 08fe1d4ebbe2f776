/**
 * The anchor of the end-to-end case: Kannel (bearerbox + smsbox, installed by scripts/setup-system.sh) with one SMPP
 * connection to an SMSC made of the `smpp` package's server, which answers every submit_sm at once and sends a
 * DELIVRD receipt right after, and a dlr-url pointing at a local receiver. The load is the same as Tern's: the same
 * number of messages over the same number of connections to `cgi-bin/sendsms`, timed from each request to its
 * delivered-DLR call. Kannel runs as operators usually run it: no store file, DLRs kept in memory.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import smpp from 'smpp';
import { formatReceiptText, MESSAGE_STATE } from '../src/protocols/smpp/receipt.ts';
import { describeFailures, drive } from './load.ts';
import { type EndToEnd, endToEnd, startCompletionReceiver } from './receiver.ts';
import { cpuMeter } from './cpu.ts';
import { freePort, progress } from './support.ts';

const BEARERBOX = process.env.BENCH_KANNEL_BEARERBOX ?? '/usr/sbin/bearerbox';
const SMSBOX = process.env.BENCH_KANNEL_SMSBOX ?? '/usr/sbin/smsbox';
/** Submits Kannel keeps in flight on its SMPP connection: the SMPP case's window. */
export const SMSC_WINDOW = 100;

/** null when Kannel can run here, else why not. */
export function kannelMissing(): string | null {
  return existsSync(BEARERBOX) && existsSync(SMSBOX) ? null : `Kannel not installed (${BEARERBOX}, ${SMSBOX}; scripts/setup-system.sh installs it)`;
}

/**
 * The SMSC: binds, answers each submit_sm with a new id, then sends its receipt as a deliver_sm. Kannel's row talks
 * to one, and so does Tern's like-for-like row (e2e.ts).
 */
export async function startSmsc(): Promise<{ port: number; bound: Promise<void>; close(): void }> {
  let ids = 0;
  let onBound: () => void = () => {};
  const bound = new Promise<void>((resolve) => (onBound = resolve));
  const server = smpp.createServer({}, (s) => {
    s.on('error', () => {});
    for (const bind of ['bind_transceiver', 'bind_transmitter', 'bind_receiver']) {
      s.on(bind, (pdu: smpp.PDU) => {
        s.send(pdu.response());
        onBound();
      });
    }
    s.on('enquire_link', (pdu: smpp.PDU) => s.send(pdu.response()));
    s.on('unbind', (pdu: smpp.PDU) => s.send(pdu.response()));
    s.on('deliver_sm_resp', () => {});
    s.on('submit_sm', (pdu: smpp.PDU) => {
      const id = String(++ids);
      s.send(pdu.response({ message_id: id }));
      const now = new Date();
      s.send(
        new smpp.PDU('deliver_sm', {
          source_addr_ton: pdu['dest_addr_ton'],
          source_addr_npi: pdu['dest_addr_npi'],
          source_addr: pdu['destination_addr'],
          dest_addr_ton: pdu['source_addr_ton'],
          dest_addr_npi: pdu['source_addr_npi'],
          destination_addr: pdu['source_addr'],
          esm_class: 0x04,
          short_message: formatReceiptText({ id, submitDate: now, doneDate: now, stat: 'DELIVRD', err: 0 }),
          receipted_message_id: id,
          message_state: MESSAGE_STATE.DELIVERED,
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    bound,
    close() {
      for (const s of server.sessions ?? []) s.destroy();
      server.close();
    },
  };
}

function config(o: { dir: string; smsc: number; adminPort: number; boxPort: number; sendsmsPort: number }): string {
  return `
group = core
admin-port = ${o.adminPort}
admin-password = admin
admin-allow-ip = "127.0.0.1"
smsbox-port = ${o.boxPort}
box-allow-ip = "127.0.0.1"
log-file = "${join(o.dir, 'bearerbox.log')}"
log-level = 2
dlr-storage = internal

group = smsc
smsc = smpp
smsc-id = bench
host = 127.0.0.1
port = ${o.smsc}
transceiver-mode = true
smsc-username = "bench"
smsc-password = "bench"
system-type = ""
max-pending-submits = ${SMSC_WINDOW}
enquire-link-interval = 30
reconnect-delay = 1

group = smsbox
bearerbox-host = 127.0.0.1
bearerbox-port = ${o.boxPort}
sendsms-port = ${o.sendsmsPort}
log-file = "${join(o.dir, 'smsbox.log')}"
log-level = 2

group = sendsms-user
username = bench
password = bench
user-allow-ip = "127.0.0.1"
max-messages = 1

group = sms-service
keyword = default
catch-all = true
max-messages = 0
text = ""
`;
}

function logTail(dir: string): string {
  return ['bearerbox.log', 'smsbox.log']
    .map((f) => join(dir, f))
    .filter(existsSync)
    .map((p) => `--- ${p}\n${readFileSync(p, 'utf8').split('\n').slice(-20).join('\n')}`)
    .join('\n');
}

async function until(what: string, timeoutMs: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });

async function stop(p: ChildProcess): Promise<void> {
  if (p.exitCode !== null || p.signalCode !== null) return;
  const exited = once(p, 'exit');
  p.kill('SIGTERM');
  const timer = setTimeout(() => p.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

export interface KannelRun extends EndToEnd {
  accepted: number;
  note: string;
  /** Kannel's CPU (every process of it) a message delivered. */
  cpuMs: number;
}

/** `total` messages through Kannel's sendsms over `connections` connections, each timed until its delivered DLR. */
export async function runKannel(total: number, connections: number): Promise<KannelRun> {
  const dir = mkdtempSync(join(tmpdir(), 'tern-bench-kannel-'));
  const smsc = await startSmsc();
  // Kannel calls the dlr-url with %d = 1 for a delivered message (dlr-mask 1 asks for those only).
  const receiver = await startCompletionReceiver(total, (c) => (c.query.get('status') === '1' ? 'done' : 'other'));
  const processes: ChildProcess[] = [];
  try {
    const [adminPort, boxPort, sendsmsPort] = [await freePort(), await freePort(), await freePort()];
    const conf = join(dir, 'kannel.conf');
    writeFileSync(conf, config({ dir, smsc: smsc.port, adminPort, boxPort, sendsmsPort }));
    processes.push(spawn(BEARERBOX, [conf], { stdio: 'ignore' }));
    await until('bearerbox listening', 15_000, () => listening(boxPort));
    processes.push(spawn(SMSBOX, [conf], { stdio: 'ignore' }));
    await Promise.race([
      smsc.bound,
      new Promise((_, reject) => setTimeout(() => reject(new Error(`Kannel did not bind to the SMSC\n${logTail(dir)}`)), 15_000)),
    ]);
    await until('smsbox listening', 15_000, () => listening(sendsmsPort));

    progress(`Kannel: ${total} messages, sendsms → SMPP → DLR`);
    const dlrUrl = (i: number) => `${receiver.url}/dlr?n=${i}&status=%d`;
    const cpu = cpuMeter({ Kannel: processes.map((p) => p.pid) });
    const load = await drive(`http://127.0.0.1:${sendsmsPort}`, {
      total,
      connections,
      request: (i) => ({
        method: 'GET',
        path: `/cgi-bin/sendsms?${new URLSearchParams({
          username: 'bench',
          password: 'bench',
          from: 'BENCH',
          to: `336${40_000_005 + (i % 1_000_000) * 10}`,
          text: 'Your verification code is 123456.',
          'dlr-mask': '1',
          'dlr-url': dlrUrl(i),
        })}`,
      }),
    });
    if (load.ok === 0) throw new Error(`Kannel accepted nothing: ${describeFailures(load.failures)}\n${logTail(dir)}`);
    await receiver.waitAll();
    const e = endToEnd(load.startedAt, receiver.doneAt);
    const spent = cpu.stop(e.done);
    const failures = load.failures.size > 0 ? `; refused: ${describeFailures(load.failures)}` : '';
    return {
      ...e,
      accepted: load.ok,
      cpuMs: spent.perUnit.find((p) => p.name === 'Kannel')?.ms ?? 0,
      note: `accepting took ${(load.elapsedMs / 1000).toFixed(1)} s; ${e.done} of ${load.ok} DLRs${failures}; ${spent.text}`,
    };
  } finally {
    for (const p of processes.reverse()) await stop(p);
    smsc.close();
    await receiver.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
