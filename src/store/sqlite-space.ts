import { statfsSync } from 'node:fs';
import type SQLite from 'better-sqlite3';

/**
 * Below this much free space the disk holding a SQLite database is taken as full: a write may still fit in the log's
 * room, but the next checkpoint, the log's growth or a transaction of a few hundred messages would not.
 */
export const MIN_FREE_BYTES = 1024 * 1024;

/** Free space (for an unprivileged writer) on the filesystem holding `dir`, in bytes; null when it cannot be told. */
export function diskSpace(dir: string): number | null {
  try {
    const s = statfsSync(dir, { bigint: false });
    return s.bavail * s.bsize;
  } catch {
    return null;
  }
}

/** SQLite's errors that mean the disk is full, or a write to it failed. */
export function isDiskFull(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^SQLITE_(FULL|IOERR(_\w+)?)$/.test(code);
}

/**
 * A small write that commits: the database header's application id written again with its own value (one page to
 * the log). Throws SQLite's error when the write fails (SQLITE_FULL with no room left for it).
 */
export function probeWrite(handle: SQLite.Database): void {
  const id = handle.pragma('application_id', { simple: true }) as number;
  handle.pragma(`application_id = ${Number(id) | 0}`);
}

/** "12.3 MiB", "640 KiB": a size in a log line. */
export function describeBytes(n: number): string {
  if (n >= 1024 * 1024) return `${(n / 1024 / 1024).toFixed(1)} MiB`;
  return `${Math.round(n / 1024)} KiB`;
}
