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

  /** Takes `n` units of `key`'s current window, or says when to try again. */
  async take(key: string, n: number, rate: RateLimit, chunk = Math.max(1, Math.ceil(rate.limit / 10))): Promise<TakeResult> {
    const now = this.now();
    const windowStart = now - (now % rate.windowMs);
    const resetAt = windowStart + rate.windowMs;
    let l = this.local.get(key);
    if (!l || l.windowStart !== windowStart) {
      l = { windowStart, held: 0, granted: 0 };
      this.local.set(key, l);
      if (this.local.size > 10_000) this.forgetOld(windowStart);
    }
    if (l.held < n) {
      const want = Math.max(n - l.held, Math.min(chunk, rate.limit));
      const got = this.shared ? await takeFromWindow(this.store, key, windowStart, want, rate.limit) : Math.min(want, rate.limit - l.granted);
      // Another take of this key may have run while this one waited for the database.
      const current = this.local.get(key);
      if (current && current.windowStart === windowStart) l = current;
      l.held += got;
      l.granted += got;
    }
    if (l.held < n) return { ok: false, retryAt: resetAt, resetAt };
    l.held -= n;
    return { ok: true, remaining: Math.max(0, rate.limit - l.granted) + l.held, resetAt };
  }

  private forgetOld(current: number): void {
    for (const [k, v] of this.local) if (v.windowStart < current) this.local.delete(k);
  }

  /** Deletes shared windows older than `keepMs` (a pruning task). */
  prune(now: number, keepMs = 3_600_000): Promise<number> {
    return this.shared ? deleteRateWindowsBefore(this.store, now - keepMs) : Promise.resolve(0);
  }
}
