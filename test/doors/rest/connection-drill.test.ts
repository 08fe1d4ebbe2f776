// Drill: 2,000 idle and slow HTTP connections against a Tern process with small timeouts — connections that send
// nothing, a request head at a byte every 1.5 s, a body at a byte every 5 s, clients that never read the OpenAPI
// document — while another tenant sends. Connection handling is the HTTP server's, the same on either database: SQLite.
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, describe, test } from 'node:test';
import { freePort, startTernProcess, type TernProcess } from '../../support/process.ts';
import { createTenant, freshDatabase, request } from '../../support/server.ts';
import { descriptorCount } from '../../support/sockets.ts';
import { eventually, sleep } from '../../support/wait.ts';

const HEAD_TIMEOUT_S = 2;
const REQUEST_TIMEOUT_S = 4;
const MAX_CONNECTIONS = 2_500;

interface Slow {
  kind: 'idle' | 'slow head' | 'slow body' | 'never reads';
  socket: Socket;
  openedAt: number;
  /** Milliseconds from open to close, once closed. */
  lasted: number | null;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;
}

describe('drill: 2,000 idle and slow HTTP connections', () => {
  const cleanups: Array<() => Promise<void>> = [];
  after(async () => {
    for (const c of cleanups.reverse()) await c();
  });

  test('each is closed within its timeout, descriptors stay within the cap, and another tenant is served throughout', async () => {
    const database = await freshDatabase('sqlite');
    cleanups.push(() => database.cleanup());
    const port = await freePort();
    const tern: TernProcess = await startTernProcess(database.url, port, {
      TERN_HTTP_HEADERS_TIMEOUT_SECONDS: String(HEAD_TIMEOUT_S),
      TERN_HTTP_REQUEST_TIMEOUT_SECONDS: String(REQUEST_TIMEOUT_S),
      TERN_HTTP_KEEP_ALIVE_SECONDS: '2',
      TERN_HTTP_IDLE_TIMEOUT_SECONDS: String(REQUEST_TIMEOUT_S),
      TERN_HTTP_MAX_CONNECTIONS: String(MAX_CONNECTIONS),
    });
    cleanups.push(() => tern.stop());
    const pid = tern.child.pid!;
    const other = await createTenant(tern, { balance: 100 });
    const send = () =>
      request(tern, 'POST', '/sms/v1/messages', { key: other.key, body: { recipient: { to: '33612345678' }, body: { text: 'still served' } } });
    const quiet: number[] = [];
    for (let i = 0; i < 40; i++) {
      const started = Date.now();
      assert.equal((await send()).status, 201);
      quiet.push(Date.now() - started);
    }
    quiet.sort((a, b) => a - b);
    await sleep(3_000); // the keep-alive connections of the warm-up are gone
    const baseline = descriptorCount(pid);

    // The other tenant sends all along, four requests at a time, each timed.
    const latencies: number[] = [];
    const statuses = new Map<number, number>();
    let sending = true;
    const load = Promise.all(
      Array.from({ length: 4 }, async () => {
        while (sending) {
          const started = Date.now();
          const r = await send().catch(() => ({ status: 0 }));
          latencies.push(Date.now() - started);
          statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
        }
      }),
    );
    const slow: Slow[] = [];
    // Whatever fails below, the load and the slow connections end with the test: left going, they kept the file's
    // process alive, and the suite with it.
    cleanups.push(async () => {
      sending = false;
      for (const s of slow) s.socket.destroy();
      await load;
    });
    let mostDescriptors = 0;
    const watch = setInterval(() => (mostDescriptors = Math.max(mostDescriptors, descriptorCount(pid))), 100);
    cleanups.push(async () => clearInterval(watch));

    const open = (kind: Slow['kind'], onConnect: (s: Socket) => void) => {
      const socket = connect(port, '127.0.0.1');
      const entry: Slow = { kind, socket, openedAt: Date.now(), lasted: null };
      socket.on('error', () => {});
      if (kind !== 'never reads') socket.resume();
      socket.on('connect', () => onConnect(socket));
      socket.once('close', () => (entry.lasted = Date.now() - entry.openedAt));
      slow.push(entry);
    };
    const every = (socket: Socket, ms: number, chunk: () => string | null) => {
      const timer = setInterval(() => {
        const c = chunk();
        if (socket.destroyed || c === null) return clearInterval(timer);
        socket.write(c);
      }, ms);
      socket.once('close', () => clearInterval(timer));
    };
    const body = JSON.stringify({ recipient: { to: '33612345678' }, body: { text: 'x'.repeat(200) } });
    // In batches, as a flood arrives, within the listen backlog.
    for (let batch = 0; batch < 10; batch++) {
      for (let i = 0; i < 200; i++) {
        const n = batch * 200 + i;
        if (n % 3 === 0) open('idle', () => {});
        else if (n % 3 === 1) {
          open('slow head', (s) => {
            s.write('GET /healthz HTTP/1.1\r\nHost: tern\r\n');
            every(s, 1_500, () => 'X');
          });
        } else if (n % 40 === 2) {
          open('never reads', (s) => {
            s.write('GET /openapi.json HTTP/1.1\r\nHost: tern\r\nAccept-Encoding: identity\r\n\r\n');
            s.pause();
          });
        } else {
          open('slow body', (s) => {
            s.write(
              `POST /sms/v1/messages HTTP/1.1\r\nHost: tern\r\nX-Api-Key: ${other.key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
            );
            let sent = 0;
            s.write(body[sent++]!);
            every(s, 5_000, () => (sent < body.length ? body[sent++]! : null));
          });
        }
      }
      await sleep(50);
    }
    assert.equal(slow.length, 2_000);

    const readers = slow.filter((s) => s.kind !== 'never reads');
    await eventually(() => readers.every((s) => s.lasted !== null), 30_000, 'every idle and slow connection closed by the server').catch((err: Error) => {
      const open = new Map<string, number>();
      for (const s of readers) if (s.lasted === null) open.set(s.kind, (open.get(s.kind) ?? 0) + 1);
      throw new Error(`${err.message}: still open after 30 s, by kind: ${JSON.stringify(Object.fromEntries(open))}`);
    });
    // Those that never read see nothing; the server's side of them is counted in its descriptors below.
    await eventually(() => descriptorCount(pid) <= baseline + 20, 30_000, 'the descriptors of the flood given back');
    sending = false;
    await load;
    clearInterval(watch);
    for (const s of slow) s.socket.destroy();

    const sorted = [...latencies].sort((a, b) => a - b);
    const by = (kind: Slow['kind']) =>
      slow
        .filter((s) => s.kind === kind)
        .map((s) => s.lasted!)
        .sort((a, b) => a - b);
    const lasted = (kind: Slow['kind']) => {
      const l = by(kind);
      return l.length === 0 ? 'none' : `${l.length}, closed after ${l[0]}–${l.at(-1)} ms`;
    };
    process.stdout.write(
      `# 2,000 slow connections: idle ${lasted('idle')}; slow head ${lasted('slow head')}; slow body ${lasted('slow body')}; ` +
        `${slow.filter((s) => s.kind === 'never reads').length} never reading\n` +
        `# descriptors: ${baseline} before, ${mostDescriptors} at most (cap ${MAX_CONNECTIONS} connections)\n` +
        `# the other tenant meanwhile: ${latencies.length} sends (alone before: p50 ${percentile(quiet, 50)} ms), p50 ${percentile(sorted, 50)} ms, p99 ${percentile(sorted, 99)} ms, max ${sorted.at(-1)} ms; statuses ${JSON.stringify(Object.fromEntries(statuses))}\n`,
    );
    // Within their timeouts, give or take a second for Node's look (every half second here) and a loaded machine.
    const margin = 3_000;
    for (const kind of ['idle', 'slow head'] as const) assert.ok(by(kind).at(-1)! <= HEAD_TIMEOUT_S * 1000 + margin, `${kind}: ${lasted(kind)}`);
    assert.ok(by('slow body').at(-1)! <= REQUEST_TIMEOUT_S * 1000 + margin, `slow body: ${lasted('slow body')}`);
    assert.ok(mostDescriptors <= baseline + MAX_CONNECTIONS + 50, `${mostDescriptors} descriptors at most`);
    assert.deepEqual([...statuses.keys()], [201], 'every send of the other tenant answered 201');
    assert.ok(latencies.length >= 20, `${latencies.length} sends`);
    assert.ok(sorted.at(-1)! < 10_000, `each answered within 10 s (the slowest ${sorted.at(-1)} ms)`);
  });
});
