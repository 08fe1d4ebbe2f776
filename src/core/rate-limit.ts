import type { Store } from '../store/db.ts';
import { deleteRateWindowsBefore, takeFromWindow } from '../store/rate-windows.ts';

export interface RateLimit {
  /** Units per window (messages, requests…). */
  limit: number;
  windowMs: number;
}

export type TakeResult = { ok: true; remaining: number; resetAt: number } | { ok: false; retryAt: number; resetAt: number };

interface Local {
  windowStart: number;
  /** Units this node holds for the window and has not used. */
  held: number;
  /** Units this node was granted in the window (what it holds, plus what it used). */
  granted: number;
  /** The one request for more units of this window in flight; concurrent takes wait for it instead of each asking. */
  fetching: Promise<void> | null;
  /** The cluster had no more units of this window to give. */
  spent: boolean;
}

/**
 * Rate limits that hold for the whole cluster, in fixed windows. With one node (SQLite) the count is kept in
 * memory. With several nodes (PostgreSQL) each node takes a share of the current window from the database a chunk at
 * a time — a tenth of the limit by default — and spends it locally, so a limit costs one database write per chunk,
 * not per unit, and the nodes together never exceed it; a node may hold a share it does not use (the cluster then
 * stays below the limit, never above).
 */
export class ClusterRateLimiter {
  private readonly local = new Map<string, Local>();

  constructor(
    private readonly store: Store,
    private readonly now: () => number = Date.now,
  ) {}

  private get shared(): boolean {
    return this.store.dialect === 'postgres';
  }

  /**
   * Takes `n` units of `key`'s current window, or says when to try again. The units are granted for the window that
   * holds the moment this resolves: a grant that arrives after its window ended (a slow database, a busy event loop)
   * is dropped and the units are taken from the new window instead, so what is spent in a window never exceeds it.
   */
  async take(key: string, n: number, rate: RateLimit, chunk = Math.max(1, Math.ceil(rate.limit / 10))): Promise<TakeResult> {
    for (;;) {
      const r = await this.takeOnce(key, n, rate, chunk);
      if (!r.ok || this.now() < r.resetAt) return r;
    }
  }

  private async takeOnce(key: string, n: number, rate: RateLimit, chunk: number): Promise<TakeResult> {
    const now = this.now();
    const windowStart = now - (now % rate.windowMs);
    const resetAt = windowStart + rate.windowMs;
    let l = this.local.get(key);
    if (!l || l.windowStart !== windowStart) {
      l = { windowStart, held: 0, granted: 0, fetching: null, spent: false };
      this.local.set(key, l);
      if (this.local.size > 10_000) this.forgetOld(windowStart);
    }
    // One request for more at a time per window: a burst of concurrent takes on one node must not ask for a chunk
    // each, or the first node to see the burst holds the whole cluster's limit and the others get nothing.
    while (l.held < n && !l.spent) {
      if (l.fetching === null) {
        const fetching = this.fetch(key, l, Math.max(n - l.held, Math.min(chunk, rate.limit)), rate.limit);
        const done = () => {
          if (l.fetching === fetching) l.fetching = null;
        };
        l.fetching = fetching;
        fetching.then(done, done);
      }
      await l.fetching;
    }
    // A limit lowered during a window holds at once: this node never spends more of a window than the limit as it is
    // now, units it took under the old limit included.
    if (l.held < n || l.granted - l.held + n > rate.limit) return { ok: false, retryAt: resetAt, resetAt };
    l.held -= n;
    const remaining = Math.min(Math.max(0, rate.limit - l.granted) + l.held, rate.limit - (l.granted - l.held));
    return { ok: true, remaining, resetAt };
  }

  private async fetch(key: string, l: Local, want: number, limit: number): Promise<void> {
    const got = this.shared ? await takeFromWindow(this.store, key, l.windowStart, want, limit) : Math.max(0, Math.min(want, limit - l.granted));
    l.held += got;
    l.granted += got;
    if (got < want) l.spent = true;
  }

  private forgetOld(current: number): void {
    for (const [k, v] of this.local) if (v.windowStart < current) this.local.delete(k);
  }

  /** Deletes shared windows older than `keepMs` (a pruning task). */
  prune(now: number, keepMs = 3_600_000): Promise<number> {
    return this.shared ? deleteRateWindowsBefore(this.store, now - keepMs) : Promise.resolve(0);
  }
}
