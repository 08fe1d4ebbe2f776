/**
 * A closed-loop HTTP load: `connections` keep-alive connections each send the next request as soon as the previous
 * one is answered, until `total` were sent. Unlike autocannon it records when each request (by its number) started,
 * so the end-to-end cases can time each message from its request to its status callback. Given several origins (the
 * nodes of a cluster), the connections are spread over them in turn, each keeping to its origin.
 */
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';

export interface LoadRequest {
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface LoadResult {
  /** performance.now() when request i was sent. */
  startedAt: Float64Array;
  /** Requests answered 2xx. */
  ok: number;
  /** What went wrong otherwise, by status or error, with counts. */
  failures: Map<string, number>;
  /** From the first request sent to the last answer. */
  elapsedMs: number;
}

export async function drive(
  origin: string | string[],
  /** `request(i, o)`: request number i, sent to origin number o. */
  opts: { total: number; connections: number; request: (i: number, o: number) => LoadRequest },
): Promise<LoadResult> {
  const origins = typeof origin === 'string' ? [origin] : origin;
  const pools = origins.map(
    (o, k) => new Pool(o, { connections: Math.ceil((opts.connections - k) / origins.length), pipelining: 1, keepAliveTimeout: 60_000 }),
  );
  const startedAt = new Float64Array(opts.total);
  const failures = new Map<string, number>();
  const fail = (what: string) => failures.set(what, (failures.get(what) ?? 0) + 1);
  let ok = 0;
  let next = 0;
  const began = performance.now();
  const worker = async (w: number): Promise<void> => {
    const o = w % origins.length;
    for (let i = next++; i < opts.total; i = next++) {
      const r = opts.request(i, o);
      startedAt[i] = performance.now();
      try {
        const res = await pools[o]!.request({ origin: origins[o]!, method: r.method, path: r.path, headers: r.headers, body: r.body });
        const text = await res.body.text();
        if (res.statusCode >= 200 && res.statusCode < 300) ok++;
        else fail(`${res.statusCode} ${text.slice(0, 80)}`);
      } catch (err) {
        fail((err as Error).message);
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: opts.connections }, (_, w) => worker(w)));
  } finally {
    await Promise.all(pools.map((p) => p.close()));
  }
  return { startedAt, ok, failures, elapsedMs: performance.now() - began };
}

export const describeFailures = (f: Map<string, number>) => [...f].map(([what, n]) => `${n}× ${what}`).join(', ');
