// Sockets a process holds, read from /proc (Linux): what a test counts to check a bound on connections.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** The inodes of the sockets `pid` has open (its descriptors that are sockets). */
export function socketInodes(pid: number | 'self' = 'self'): Set<string> {
  const inodes = new Set<string>();
  const dir = `/proc/${pid}/fd`;
  for (const fd of readdirSync(dir)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`${dir}/${fd}`));
      if (m) inodes.add(m[1]!);
    } catch {
      // Closed while the folder was read.
    }
  }
  return inodes;
}

/** How many descriptors `pid` has open, of every kind. */
export function descriptorCount(pid: number | 'self' = 'self'): number {
  return readdirSync(`/proc/${pid}/fd`).length;
}

/**
 * TCP states of a connection whose side `pid` has already closed (FIN_WAIT1, FIN_WAIT2, TIME_WAIT, CLOSING, LAST_ACK):
 * its descriptor may stay open a moment after the client let it go and opened another in its place.
 */
const CLOSED_HERE = new Set(['04', '05', '06', '0B', '09']);

/**
 * TCP connections `pid` holds to (remote) `ports`, counted by port: its own descriptors, and only connections it has
 * not closed on its side.
 */
export function connectionsTo(ports: ReadonlySet<number>, pid: number | 'self' = 'self'): Map<number, number> {
  const mine = socketInodes(pid);
  const counts = new Map<number, number>();
  // The kernel writes its TCP tables a page at a time, not as one snapshot: a connection may be listed twice when the
  // table changes while it is read. Each socket (inode) counts once.
  const seen = new Set<string>();
  for (const table of ['tcp', 'tcp6']) {
    let text: string;
    try {
      text = readFileSync(`/proc/${pid}/net/${table}`, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10) continue;
      const remotePort = Number.parseInt(f[2]!.split(':')[1]!, 16);
      const inode = f[9]!;
      if (!ports.has(remotePort) || inode === '0' || !mine.has(inode) || CLOSED_HERE.has(f[3]!.toUpperCase()) || seen.has(inode)) continue;
      seen.add(inode);
      counts.set(remotePort, (counts.get(remotePort) ?? 0) + 1);
    }
  }
  return counts;
}

/** The sum of a count by port over `ports`. */
export function total(counts: ReadonlyMap<number, number>, ports?: Iterable<number>): number {
  let n = 0;
  if (ports === undefined) for (const c of counts.values()) n += c;
  else for (const p of ports) n += counts.get(p) ?? 0;
  return n;
}
