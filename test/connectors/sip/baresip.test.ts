/**
 * Tern calls a real SIP phone no test code controls: baresip (Debian package baresip-core), answering on its own and
 * recording what it hears with its sndfile module; another baresip that is busy (its one call taken) answers 486.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import dgram from 'node:dgram';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { connector, route } from '../../support/connectors.ts';
import { admin } from '../../support/connectors.ts';
import { createTenant, forEachDialect, request, startTestServer, type Tenant, type TestServer } from '../../support/server.ts';
import { eventually } from '../../support/wait.ts';
import { TestTrunk } from './uas.ts';

const BARESIP = spawnSync('baresip', ['-h'], { stdio: 'ignore' }).error === undefined;
const SOX = spawnSync('sox', ['--version'], { stdio: 'ignore' }).error === undefined;
const SKIP = !BARESIP
  ? 'baresip is not installed (Debian package baresip-core, installed by scripts/setup-system.sh)'
  : !SOX
    ? 'sox is not installed (Debian package sox)'
    : false;

/** baresip's address: neither Tern's (127.0.0.1) nor the in-process trunk's (127.0.0.2). */
const PHONE_ADDRESS = '127.0.0.3';
const ANSWERS = '33612345678';
const BUSY = '33612340001';
const RETRY_MS = 300;

/** A port free on the address for both UDP and TCP (baresip listens on both). */
async function freePort(address: string): Promise<number> {
  for (;;) {
    const server = net.createServer();
    const port = await new Promise<number>((resolve) => server.listen(0, address, () => resolve((server.address() as net.AddressInfo).port)));
    const udp = dgram.createSocket('udp4');
    const free = await new Promise<boolean>((resolve) => {
      udp.once('error', () => resolve(false));
      udp.bind(port, address, () => resolve(true));
    });
    udp.close();
    await new Promise((r) => server.close(r));
    if (free) return port;
  }
}

interface Phone {
  port: number;
  recordings: string;
  process: ChildProcess;
  log: string[];
}

/** Starts baresip answering calls to `user` on its own, recording them; `dial` makes it busy with a call of its own. */
async function startPhone(dir: string, user: string, opts: { maxCalls: number; dial?: string }): Promise<Phone> {
  const port = await freePort(PHONE_ADDRESS);
  const recordings = join(dir, 'recordings');
  mkdirSync(recordings, { recursive: true });
  writeFileSync(
    join(dir, 'config'),
    [
      'poll_method epoll',
      `sip_listen ${PHONE_ADDRESS}:${port}`,
      `call_max_calls ${opts.maxCalls}`,
      'call_local_timeout 120',
      // aubridge: a player and a source paced in real time without a sound card.
      'audio_player aubridge,phone',
      'audio_source aubridge,phone',
      'audio_alert aubridge,alert',
      'jitter_buffer_delay 0',
      'module_path /usr/lib/baresip/modules',
      'module g711.so',
      'module aubridge.so',
      'module sndfile.so',
      'module_app account.so',
      ...(opts.dial ? ['module_app menu.so'] : []),
      `snd_path ${recordings}`,
      '',
    ].join('\n'),
  );
  writeFileSync(join(dir, 'accounts'), `<sip:${user}@${PHONE_ADDRESS}>;regint=0;answermode=auto;audio_codecs=PCMA,PCMU\n`);
  const child = spawn('baresip', ['-f', dir, ...(opts.dial ? ['-e', `/dial ${opts.dial}`] : [])], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  const log: string[] = [];
  child.stdout!.setEncoding('utf8').on('data', (c: string) => log.push(c));
  child.stderr!.setEncoding('utf8').on('data', (c: string) => log.push(c));
  await eventually(async () => (log.join('').includes('baresip is ready') ? true : undefined), 10_000, `baresip ready (${log.join('')})`);
  if (opts.dial) await eventually(async () => (log.join('').includes('connecting to') ? true : undefined), 10_000, 'baresip busy with its own call');
  return { port, recordings, process: child, log };
}

function stopPhone(phone: Phone | undefined): Promise<void> {
  if (!phone || phone.process.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    phone.process.once('exit', () => resolve());
    phone.process.kill('SIGTERM');
    setTimeout(() => phone.process.kill('SIGKILL'), 3_000).unref();
  });
}

const soxStat = (file: string) => {
  const out = spawnSync('sox', [file, '-n', 'stat'], { encoding: 'utf8' }).stderr;
  const value = (name: string) => Number(new RegExp(`${name}:\\s+(-?[0-9.]+)`).exec(out)?.[1] ?? NaN);
  return { rms: value('RMS\\s+amplitude'), max: value('Maximum amplitude') };
};

describe('Voice over SIP to baresip', { skip: SKIP }, () => {
  forEachDialect('baresip answers, records, and is busy', (dialect) => {
    let dir: string;
    let phone: Phone | undefined;
    let busy: Phone | undefined;
    let hold: TestTrunk | undefined;
    let server: TestServer;
    let t: Tenant;
    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'tern-baresip-'));
      // The busy phone's own call rings on an in-process trunk that never answers: its one line stays taken.
      hold = await TestTrunk.start({ behaviour: () => 'ring' });
      phone = await startPhone(join(dir, 'answers'), ANSWERS, { maxCalls: 4 });
      busy = await startPhone(join(dir, 'busy'), BUSY, { maxCalls: 1, dial: `sip:hold@127.0.0.2:${hold.port}` });
      server = await startTestServer(dialect, { TERN_VOICE_RETRY_MS: String(RETRY_MS) });
      t = await createTenant(server, { type: 'VOICE', balance: 5 });
      await connector(server, { name: 'phone', type: 'SIP', host: PHONE_ADDRESS, port: phone.port, callsPerSecond: 0, ringTimeoutSeconds: 10 });
      await connector(server, { name: 'busy-phone', type: 'SIP', host: PHONE_ADDRESS, port: busy.port, callsPerSecond: 0, ringTimeoutSeconds: 10 });
      await route(server, { name: 'to the phone', priority: 1, match: { type: 'VOICE', prefix: ANSWERS }, connectors: [{ connector: 'phone' }] });
      await route(server, { name: 'to the busy phone', priority: 1, match: { type: 'VOICE', prefix: BUSY }, connectors: [{ connector: 'busy-phone' }] });
      await eventually(
        async () => {
          const items = (await admin(server, 'GET', '/admin/v1/connectors')).body.items as any[];
          return ['phone', 'busy-phone'].every((n) => items.find((c) => c.name === n)?.live?.state === 'UP') ? true : undefined;
        },
        10_000,
        'both phones UP',
      );
    });
    after(async () => {
      await server?.stop();
      await stopPhone(phone);
      await stopPhone(busy);
      await hold?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    const send = async (to: string) => {
      const r = await request(server, 'POST', '/voice/v1/messages', {
        key: t.key,
        body: { recipient: { to }, body: { text: 'Votre code est 482913. Il expire dans 10 minutes.' } },
      });
      assert.equal(r.status, 201, r.text);
      return r.body;
    };
    const final = (id: string) =>
      eventually(
        async () => {
          const r = await request(server, 'GET', `/voice/v1/messages/${id}`, { key: t.key });
          return ['ENROUTE', 'SCHEDULED'].includes(r.body.status.value) ? undefined : r.body;
        },
        30_000,
        `final status of ${id}`,
      );

    test('answered: DELIVERED, and baresip recorded the message: the TTS audio’s duration ± 0.5 s, not silence', async () => {
      const m = await send(ANSWERS);
      const done = await final(m.messageId);
      assert.equal(done.status.value, 'DELIVERED', JSON.stringify(done.status));
      assert.equal(done.price.amount, m.price.amount);
      // sndfile writes what baresip decoded as dump-<time>-dec.wav; the file is complete once the call ended.
      const recording = await eventually(
        async () => {
          const name = readdirSync(phone!.recordings).find((f) => f.endsWith('-dec.wav'));
          if (!name) return undefined;
          const file = join(phone!.recordings, name);
          return spawnSync('soxi', ['-D', file], { encoding: 'utf8' }).stdout.trim() !== '0.000000' ? file : undefined;
        },
        10_000,
        `baresip's recording (${phone!.log.join('').slice(-2000)})`,
      );
      const seconds = Number(execFileSync('soxi', ['-D', recording], { encoding: 'utf8' }).trim());
      assert.ok(Math.abs(seconds - m.duration) <= 0.5, `recorded ${seconds} s, the message lasts ${m.duration} s`);
      const stat = soxStat(recording);
      assert.ok(stat.rms > 0.01 && stat.max > 0.1, `not silence: ${JSON.stringify(stat)}`);
    });

    test('busy: 486 from baresip, placed again on the voice retry schedule, then UNDELIVERED / BUSY and refunded', async () => {
      const m = await send(BUSY);
      const done = await final(m.messageId);
      assert.equal(done.status.value, 'UNDELIVERED');
      assert.equal(done.status.detail, 'BUSY');
      assert.equal(done.price.amount, 0, 'refunded');
      // The last call's report may come before the dispatcher records that placement (it counts it meanwhile).
      await eventually(async () => {
        const row = await server.app.store.db.selectFrom('messages').select('attempts').where('id', '=', m.messageId).executeTakeFirstOrThrow();
        assert.equal(Number(row.attempts), 3);
        return true;
      });
      assert.equal(busy!.log.join('').match(/rejected call/g)?.length, 3, 'baresip refused three calls');
    });
  });
});
