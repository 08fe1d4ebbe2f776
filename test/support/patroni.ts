// A PostgreSQL high-availability cluster the standard way, for failover drills: one etcd member, two Patroni nodes
// (a primary and a synchronous replica) and HAProxy routing to whichever node Patroni's REST API calls the primary.
// Everything runs from Debian's packages on loopback ports, in a temporary directory of its own, as an unprivileged
// user (initdb refuses root); the machine's own PostgreSQL is never touched.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import {
  accessSync,
  chmodSync,
  chownSync,
  closeSync,
  constants,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import pg from 'pg';
import { stringify } from 'yaml';
import { freePort } from './process.ts';
import { eventually, sleep } from './wait.ts';

/** Leader lock TTL, HA loop and retry timeout: small, for a failover in seconds (loop_wait + 2 × retry_timeout ≤ ttl). */
export const PATRONI_TIMING = { ttl: 10, loop_wait: 2, retry_timeout: 4 } as const;

const TERN_PASSWORD = 'tern-drill';

function findExecutable(name: string): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/sbin'].filter(Boolean);
  for (const dir of dirs) {
    try {
      accessSync(join(dir, name), constants.X_OK);
      return join(dir, name);
    } catch {
      // not there
    }
  }
  return undefined;
}

/** The newest PostgreSQL server binaries Debian installed (`/usr/lib/postgresql/<major>/bin`). */
function findPostgresBin(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const majors = readdirSync(root)
    .filter((v) => /^\d+$/.test(v) && existsSync(join(root, v, 'bin', 'postgres')) && existsSync(join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return majors.length > 0 ? join(root, majors[0]!, 'bin') : undefined;
}

interface Tools {
  etcd: string;
  patroni: string;
  haproxy: string;
  pgBin: string;
  /** The user Patroni and PostgreSQL run as when the tests run as root. */
  user?: { uid: number; gid: number };
}

function findTools(): Tools | string {
  const etcd = findExecutable('etcd');
  const patroni = findExecutable('patroni');
  const haproxy = findExecutable('haproxy');
  const pgBin = findPostgresBin();
  const missing = [
    !etcd && 'etcd (Debian package etcd-server)',
    !patroni && 'patroni (Debian package patroni)',
    !haproxy && 'haproxy (Debian package haproxy)',
    !pgBin && 'PostgreSQL server binaries (/usr/lib/postgresql/<major>/bin, Debian package postgresql)',
  ].filter(Boolean);
  if (missing.length > 0) return `not installed: ${missing.join(', ')} — scripts/setup-system.sh installs them`;
  if (process.getuid?.() !== 0) return { etcd: etcd!, patroni: patroni!, haproxy: haproxy!, pgBin: pgBin! };
  try {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    return { etcd: etcd!, patroni: patroni!, haproxy: haproxy!, pgBin: pgBin!, user: { uid, gid } };
  } catch {
    return 'running as root and there is no "postgres" user to run PostgreSQL as (initdb refuses root)';
  }
}

/** Why a Patroni cluster cannot be started on this machine, or undefined when it can. */
export function patroniMissing(): string | undefined {
  const tools = findTools();
  return typeof tools === 'string' ? tools : undefined;
}

export interface PatroniNode {
  name: string;
  pgPort: number;
  apiPort: number;
  dataDir: string;
  /** The Patroni process. */
  pid: number;
  /** The node's postmaster, from its `postmaster.pid` (undefined before PostgreSQL first started). */
  postmasterPid(): number | undefined;
  /** A connection string straight to this node's PostgreSQL, bypassing HAProxy. */
  directUrl: string;
}

export interface PatroniCluster {
  /** Tern's connection string, through HAProxy to the primary. */
  url: string;
  nodes: PatroniNode[];
  etcdPid: number;
  haproxyPid: number;
  /** The node holding the leader lock, as Patroni's REST API says; waits for one, at most `timeoutMs`. */
  leader(timeoutMs?: number, not?: PatroniNode): Promise<PatroniNode>;
  /** Waits until the cluster has a leader and a synchronous standby again, at most `timeoutMs`. */
  synchronous(timeoutMs?: number): Promise<unknown>;
  /** A planned switchover through Patroni's REST API: `from` is demoted (and follows), `to` promoted. */
  switchover(from: PatroniNode, to: PatroniNode): Promise<void>;
  /** kill -9 of a node's Patroni and its postmaster at once: nothing restarts it, the other node takes over. */
  kill(node: PatroniNode): void;
  /** The last lines of every process's log, for a failure message. */
  logs(lines?: number): string;
  /** Kills everything and removes the directory. */
  stop(): Promise<void>;
}

interface Proc {
  name: string;
  child: ChildProcess;
  exited: Promise<void>;
  log: string;
}

function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

function readPostmasterPid(dataDir: string): { pid: number; shmem?: { key: number; id: number } } | undefined {
  try {
    const lines = readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n');
    const pid = Number(lines[0]);
    if (!Number.isInteger(pid) || pid <= 0) return undefined;
    const [key, id] = (lines[6] ?? '').trim().split(/\s+/).map(Number);
    return { pid, ...(Number.isInteger(key) && Number.isInteger(id) && { shmem: { key: key!, id: id! } }) };
  } catch {
    return undefined;
  }
}

/** Removes the System V segment a killed postmaster left, when it is still the one it made and nothing uses it. */
function removeOrphanSegment(shmem: { key: number; id: number }): void {
  try {
    const table = execFileSync('ipcs', ['-m'], { encoding: 'utf8' });
    const row = table
      .split('\n')
      .map((l) => l.trim().split(/\s+/))
      .find((c) => Number(c[1]) === shmem.id);
    if (row && Number.parseInt(row[0]!, 16) === shmem.key && row[5] === '0') execFileSync('ipcrm', ['-m', String(shmem.id)]);
  } catch {
    // ipcs/ipcrm absent or the segment gone: nothing to clean
  }
}

/**
 * A log without the tracebacks Patroni's REST API prints each time a health check closes its connection with a reset
 * before reading the whole answer (HAProxy's checks do): they say nothing and would fill a failure's excerpt.
 */
function withoutCheckResets(lines: string[]): string[] {
  const out: string[] = [];
  let skipping = false;
  for (const line of lines) {
    if (line.includes('Exception happened during processing of request')) skipping = true;
    if (!skipping) out.push(line);
    if (skipping && /^(ConnectionResetError|BrokenPipeError)/.test(line)) skipping = false;
  }
  // Patroni's "no action" line every HA loop says only that nothing changed.
  return out.filter((l) => !/^-{20,}$/.test(l) && l.trim() !== '' && !l.includes('INFO: no action.'));
}

async function getJson(url: string): Promise<any> {
  const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
  return res.json();
}

/**
 * Starts etcd, two Patroni nodes and HAProxy, and waits until the cluster has a leader, a synchronous standby and
 * HAProxy routes to the leader; creates a `tern` role and database. Throws with the processes' logs when it cannot.
 */
export async function startPatroniCluster(): Promise<PatroniCluster> {
  const tools = findTools();
  if (typeof tools === 'string') throw new Error(tools);
  const dir = mkdtempSync(join(tmpdir(), 'tern-patroni-'));
  const procs: Proc[] = [];
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, LANG: 'C.UTF-8' };

  const start = (name: string, file: string, args: string[], asUser: boolean): Proc => {
    const log = join(dir, `${name}.log`);
    const fd = openSync(log, 'a');
    const child = spawn(file, args, {
      cwd: dir,
      env,
      stdio: ['ignore', fd, fd],
      ...(asUser && tools.user && { uid: tools.user.uid, gid: tools.user.gid }),
    });
    closeSync(fd);
    const exited = new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.once('error', () => resolve());
    });
    const proc = { name, child, exited, log };
    procs.push(proc);
    return proc;
  };

  const logs = (lines = 30) =>
    procs
      .map((p) => {
        const text = existsSync(p.log) ? withoutCheckResets(readFileSync(p.log, 'utf8').trimEnd().split('\n')).slice(-lines).join('\n') : '';
        return `--- ${p.name} (${p.log}) ---\n${text}`;
      })
      .join('\n');

  const nodes: PatroniNode[] = [];
  const stop = async () => {
    for (const p of procs) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    await Promise.all(procs.map((p) => p.exited));
    // PostgreSQL outlives Patroni (it is started detached): an immediate shutdown lets the postmaster clean up.
    const postmasters = nodes.map((n) => readPostmasterPid(n.dataDir)).filter((p) => p !== undefined);
    for (const p of postmasters) if (alive(p.pid)) process.kill(p.pid, 'SIGQUIT');
    const deadline = Date.now() + 10_000;
    while (postmasters.some((p) => alive(p.pid)) && Date.now() < deadline) await sleep(50);
    for (const p of postmasters) if (alive(p.pid)) process.kill(p.pid, 'SIGKILL');
    await sleep(100);
    for (const p of postmasters) if (p.shmem) removeOrphanSegment(p.shmem);
    rmSync(dir, { recursive: true, force: true });
    process.off('exit', abandon);
  };
  // A test process that ends without stop() (cancelled on a timeout) leaves no PostgreSQL, etcd or HAProxy running.
  const abandon = () => {
    for (const p of procs) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    for (const n of nodes) {
      const pid = readPostmasterPid(n.dataDir)?.pid;
      if (pid !== undefined && alive(pid)) process.kill(pid, 'SIGKILL');
    }
    rmSync(dir, { recursive: true, force: true });
  };
  process.on('exit', abandon);

  try {
    const [etcdClient, etcdPeer, haPort] = [await freePort(), await freePort(), await freePort()];
    const etcd = start(
      'etcd',
      tools.etcd,
      [
        '--name=drill',
        `--data-dir=${join(dir, 'etcd')}`,
        `--listen-client-urls=http://127.0.0.1:${etcdClient}`,
        `--advertise-client-urls=http://127.0.0.1:${etcdClient}`,
        `--listen-peer-urls=http://127.0.0.1:${etcdPeer}`,
        `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeer}`,
        `--initial-cluster=drill=http://127.0.0.1:${etcdPeer}`,
        '--initial-cluster-state=new',
        '--logger=zap',
        '--log-level=warn',
      ],
      false,
    );
    await eventually(async () => (await getJson(`http://127.0.0.1:${etcdClient}/health`)).health === 'true', 20_000, 'etcd to answer');

    for (const name of ['pg0', 'pg1']) {
      const [pgPort, apiPort] = [await freePort(), await freePort()];
      const home = join(dir, name);
      mkdirSync(home);
      const dataDir = join(home, 'data');
      const config = {
        scope: 'tern-drill',
        namespace: '/patroni/',
        name,
        restapi: { listen: `127.0.0.1:${apiPort}`, connect_address: `127.0.0.1:${apiPort}` },
        etcd3: { hosts: [`127.0.0.1:${etcdClient}`] },
        bootstrap: {
          dcs: {
            ...PATRONI_TIMING,
            maximum_lag_on_failover: 1048576,
            // A commit returns only once the standby has it: a failover loses nothing acknowledged.
            synchronous_mode: true,
            // Not strict: with two nodes, strict mode stops every write while either node is down.
            synchronous_mode_strict: false,
            postgresql: {
              use_pg_rewind: false,
              use_slots: true,
              parameters: {
                max_connections: 60,
                shared_buffers: '32MB',
                wal_level: 'replica',
                hot_standby: 'on',
                max_wal_senders: 5,
                max_replication_slots: 5,
              },
            },
          },
          initdb: [{ encoding: 'UTF8' }, { locale: 'C' }],
        },
        postgresql: {
          listen: `127.0.0.1:${pgPort}`,
          connect_address: `127.0.0.1:${pgPort}`,
          data_dir: dataDir,
          bin_dir: tools.pgBin,
          pgpass: join(home, 'pgpass'),
          authentication: {
            superuser: { username: 'postgres', password: 'drill-superuser' },
            replication: { username: 'replicator', password: 'drill-replication' },
          },
          parameters: { unix_socket_directories: home },
          pg_hba: ['local all all trust', 'host all all 127.0.0.1/32 scram-sha-256', 'host replication replicator 127.0.0.1/32 scram-sha-256'],
        },
        tags: { nofailover: false, noloadbalance: false, clonefrom: false, nosync: false },
      };
      const file = join(home, 'patroni.yml');
      writeFileSync(file, stringify(config));
      if (tools.user) {
        chownSync(home, tools.user.uid, tools.user.gid);
        chownSync(file, tools.user.uid, tools.user.gid);
        chmodSync(dir, 0o755);
      }
      const proc = start(name, tools.patroni, [file], true);
      nodes.push({
        name,
        pgPort,
        apiPort,
        dataDir,
        pid: proc.child.pid!,
        postmasterPid: () => readPostmasterPid(dataDir)?.pid,
        directUrl: `postgres://tern:${TERN_PASSWORD}@127.0.0.1:${pgPort}/tern`,
      });
    }

    // A connection to a server that refuses it (the old primary, stopped, before its check marks it down) is tried
    // once more on another server (redispatch) after min(timeout connect, 1 s), instead of twice more on the same one:
    // in a switchover, half of the new connections hung 2 s and failed that way for the 3 s the demoted primary
    // stayed up in HAProxy. Sessions to a server marked down are cut: nothing stays connected to a replica.
    const haCfg = join(dir, 'haproxy.cfg');
    writeFileSync(
      haCfg,
      [
        'global',
        '  maxconn 500',
        'defaults',
        '  mode tcp',
        '  retries 1',
        '  option redispatch',
        '  timeout connect 1s',
        '  timeout client 30m',
        '  timeout server 30m',
        '  timeout check 1s',
        'listen primary',
        `  bind 127.0.0.1:${haPort}`,
        '  option httpchk GET /primary',
        '  http-check expect status 200',
        '  default-server inter 1s fastinter 500ms fall 2 rise 1 on-marked-down shutdown-sessions',
        ...nodes.map((n) => `  server ${n.name} 127.0.0.1:${n.pgPort} maxconn 200 check port ${n.apiPort}`),
        '',
      ].join('\n'),
    );
    const haproxy = start('haproxy', tools.haproxy, ['-db', '-f', haCfg], false);

    const clusterState = async (): Promise<{ name: string; role: string; state: string }[]> => {
      for (const n of nodes) {
        const body = await getJson(`http://127.0.0.1:${n.apiPort}/cluster`).catch(() => null);
        if (body?.members) return body.members;
      }
      return [];
    };
    const leader = async (timeoutMs = 30_000, not?: PatroniNode) => {
      const name = await eventually(
        async () => (await clusterState()).find((m) => m.role === 'leader' && m.state === 'running' && m.name !== not?.name)?.name,
        timeoutMs,
        'a Patroni leader',
      );
      return nodes.find((n) => n.name === name)!;
    };

    const synchronous = (timeoutMs: number) =>
      eventually(
        async () => {
          for (const p of procs) if (p.child.exitCode !== null) throw new Error(`${p.name} exited with code ${p.child.exitCode}`);
          const members = await clusterState();
          return (
            members.some((m) => m.role === 'leader' && m.state === 'running') &&
            members.some((m) => m.role === 'sync_standby' && ['running', 'streaming'].includes(m.state))
          );
        },
        timeoutMs,
        'a Patroni leader and a synchronous standby',
      );
    await synchronous(90_000);
    const first = await leader();
    // Through HAProxy, as the application will connect.
    const admin = `postgres://postgres:drill-superuser@127.0.0.1:${haPort}/postgres`;
    await eventually(
      async () => {
        const c = new pg.Client({ connectionString: admin, connectionTimeoutMillis: 2_000 });
        await c.connect();
        try {
          const r = await c.query(`select not pg_is_in_recovery() as primary, inet_server_port() as port,
            (select count(*) from pg_stat_replication where sync_state = 'sync') as sync`);
          return r.rows[0].primary && r.rows[0].port === first.pgPort && Number(r.rows[0].sync) === 1;
        } finally {
          await c.end();
        }
      },
      30_000,
      'HAProxy to route to the primary, with its synchronous standby streaming',
    );
    const c = new pg.Client({ connectionString: admin });
    await c.connect();
    await c.query(`create role tern login password '${TERN_PASSWORD}'`);
    await c.query('create database tern owner tern');
    await c.end();

    return {
      url: `postgres://tern:${TERN_PASSWORD}@127.0.0.1:${haPort}/tern`,
      nodes,
      etcdPid: etcd.child.pid!,
      haproxyPid: haproxy.child.pid!,
      leader,
      synchronous: (timeoutMs = 60_000) => synchronous(timeoutMs),
      async switchover(from, to) {
        const res = await fetch(`http://127.0.0.1:${from.apiPort}/switchover`, {
          method: 'POST',
          body: JSON.stringify({ leader: from.name, candidate: to.name }),
        });
        if (res.status !== 200) throw new Error(`switchover from ${from.name} to ${to.name}: ${res.status} ${await res.text()}`);
      },
      kill(node) {
        const postmaster = node.postmasterPid();
        process.kill(node.pid, 'SIGKILL');
        if (postmaster !== undefined && alive(postmaster)) process.kill(postmaster, 'SIGKILL');
      },
      logs,
      stop,
    };
  } catch (err) {
    const text = logs();
    await stop();
    throw new Error(`${(err as Error).message}\n${text}`);
  }
}
