/**
 * The end of an end-to-end case: an HTTP server on 127.0.0.1 that receives status callbacks (Tern's signed webhooks,
 * Kannel's dlr-url calls), and records when each message (by its number, `n` in the callback URL's query) reached
 * its final status.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { progress } from './support.ts';

export interface Callback {
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * What a callback means: 'done' (the message's final status, success), 'other' (a callback that does not complete the
 * message: another status), or 'refused' (answered 400: a bad signature).
 */
export type Verdict = 'done' | 'other' | 'refused';

export interface CompletionReceiver {
  url: string;
  /** performance.now() when message n's final status arrived first (0 while it has not). */
  doneAt: Float64Array;
  done: number;
  callbacks: number;
  refused: number;
  /** Waits until every message is done, or no callback came for `stallMs`; answers how many are done. */
  waitAll(stallMs?: number): Promise<number>;
  close(): Promise<void>;
}

export async function startCompletionReceiver(total: number, judge: (c: Callback) => Verdict): Promise<CompletionReceiver> {
  const doneAt = new Float64Array(total);
  let lastCallback = performance.now();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const now = performance.now();
      lastCallback = now;
      r.callbacks++;
      const query = new URL(req.url ?? '/', 'http://127.0.0.1').searchParams;
      const verdict = judge({ query, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      if (verdict === 'refused') {
        r.refused++;
        res.writeHead(400).end();
        return;
      }
      const n = Number(query.get('n'));
      if (verdict === 'done' && Number.isInteger(n) && n >= 0 && n < total && doneAt[n] === 0) {
        doneAt[n] = now;
        r.done++;
      }
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const r: CompletionReceiver = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    doneAt,
    done: 0,
    callbacks: 0,
    refused: 0,
    async waitAll(stallMs = 60_000) {
      let reported = 0;
      while (r.done < total && performance.now() - lastCallback < stallMs) {
        await new Promise((res) => setTimeout(res, 100));
        if (performance.now() - reported > 2_000) {
          progress(`  ${r.done} of ${total} done`);
          reported = performance.now();
        }
      }
      return r.done;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return r;
}

export interface EndToEnd {
  done: number;
  /** Messages a second from the first request to the last completion. */
  rate: number;
  p50: number;
  p99: number;
  spanMs: number;
}

/** Each message's time from its request to its completion, and the rate over the whole run. */
export function endToEnd(startedAt: Float64Array, doneAt: Float64Array): EndToEnd {
  const times: number[] = [];
  let first = Infinity;
  let last = 0;
  for (let i = 0; i < startedAt.length; i++) {
    if (startedAt[i]! > 0) first = Math.min(first, startedAt[i]!);
    if (doneAt[i] === 0) continue;
    times.push(doneAt[i]! - startedAt[i]!);
    last = Math.max(last, doneAt[i]!);
  }
  times.sort((a, b) => a - b);
  const pct = (p: number) => times[Math.min(times.length - 1, Math.floor((p / 100) * times.length))] ?? 0;
  const spanMs = times.length > 0 ? last - first : 0;
  return { done: times.length, rate: spanMs > 0 ? (times.length / spanMs) * 1000 : 0, p50: pct(50), p99: pct(99), spanMs };
}
