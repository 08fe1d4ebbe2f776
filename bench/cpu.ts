/**
 * Where a case's CPU went, from /proc (Linux): the processes it names (Tern's server, Kannel's boxes), the bench's
 * own process (the load generator, the webhook or DLR receiver, the SMSC), PostgreSQL's processes on this machine,
 * and the machine's cores in all. A rate on two shared cores is bounded by the CPU every process spends a message:
 * these figures say how much of that bound is Tern's.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { processCpuMs } from './support.ts';

interface Snapshot {
  bench: number;
  named: Map<string, number[]>;
  /** The main threads of the named processes, when there is one process to the name. */
  mainThreads: Map<string, number>;
  postgres: Map<number, number>;
  machine: { busy: number; total: number } | null;
}

/** The pids of this machine's PostgreSQL processes (the postmaster and its backends, by command name). */
function postgresPids(): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const pids: number[] = [];
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue;
    try {
      if (readFileSync(`/proc/${e}/comm`, 'utf8').trim() === 'postgres') pids.push(Number(e));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

function machineTicks(): { busy: number; total: number } | null {
  try {
    const [, ...values] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/);
    const n = values.slice(0, 8).map(Number); // user nice system idle iowait irq softirq steal
    const total = n.reduce((a, b) => a + b, 0);
    return { busy: total - n[3]! - n[4]!, total };
  } catch {
    return null;
  }
}

function snapshot(named: Record<string, Array<number | undefined>>, withPostgres: boolean): Snapshot {
  const usage = process.cpuUsage();
  return {
    bench: (usage.user + usage.system) / 1000,
    named: new Map(Object.entries(named).map(([name, pids]) => [name, pids.map((p) => (p === undefined ? 0 : (processCpuMs(p) ?? 0)))])),
    mainThreads: new Map(
      Object.entries(named).flatMap(([name, pids]) => (pids.length === 1 && pids[0] !== undefined ? [[name, processCpuMs(pids[0], true) ?? 0]] : [])),
    ),
    postgres: new Map(withPostgres ? postgresPids().map((p) => [p, processCpuMs(p) ?? 0]) : []),
    machine: machineTicks(),
  };
}

export interface CpuSpent {
  /**
   * ms of CPU a unit (message, send), by process: the named ones, `bench`, and `PostgreSQL` when asked for; a named
   * process alone under its name has its main thread's beside it (a Node server's event loop: its bound).
   */
  perUnit: Array<{ name: string; ms: number; mainThreadMs?: number }>;
  /** The share of all the machine's cores that was busy (0–1), whoever used them. */
  machineBusy: number | null;
  /** "CPU server 0.520 (main thread 0.410), bench 0.150, PostgreSQL 0.300 ms a message; 2 cores 97 % busy". */
  text: string;
}

/**
 * Starts counting the CPU of the processes `named` (each a list of pids, their times added), of the bench's own
 * process, and, with `postgres`, of this machine's PostgreSQL processes; `stop(units)` gives it per unit of work.
 */
export function cpuMeter(
  named: Record<string, Array<number | undefined>>,
  options: { postgres?: boolean } = {},
): { stop(units: number, unit?: string): CpuSpent } {
  const withPostgres = options.postgres === true;
  const before = snapshot(named, withPostgres);
  return {
    stop(units, unit = 'message') {
      const after = snapshot(named, withPostgres);
      const per = (ms: number) => (units > 0 ? ms / units : 0);
      const perUnit: CpuSpent['perUnit'] = [];
      for (const [name, pids] of after.named) {
        const was = before.named.get(name)!;
        const main = after.mainThreads.get(name);
        perUnit.push({
          name,
          ms: per(pids.reduce((sum, t, i) => sum + t - (was[i] ?? 0), 0)),
          ...(main !== undefined && { mainThreadMs: per(main - before.mainThreads.get(name)!) }),
        });
      }
      perUnit.push({ name: 'bench', ms: per(after.bench - before.bench) });
      if (withPostgres) {
        // Backends that started during the case count from zero; those that ended are lost (the pool's stay).
        let ms = 0;
        for (const [pid, t] of after.postgres) ms += t - (before.postgres.get(pid) ?? 0);
        perUnit.push({ name: 'PostgreSQL', ms: per(ms) });
      }
      const machineBusy =
        before.machine && after.machine && after.machine.total > before.machine.total
          ? (after.machine.busy - before.machine.busy) / (after.machine.total - before.machine.total)
          : null;
      const busy = machineBusy === null ? '' : `; ${cpus().length} cores ${Math.round(machineBusy * 100)} % busy`;
      const figure = (p: CpuSpent['perUnit'][number]) =>
        `${p.name} ${p.ms.toFixed(3)}${p.mainThreadMs === undefined ? '' : ` (main thread ${p.mainThreadMs.toFixed(3)})`}`;
      return { perUnit, machineBusy, text: `CPU ${perUnit.map(figure).join(', ')} ms a ${unit}${busy}` };
    },
  };
}

/**
 * What a row's CPU figures bound: `perSecond`, whatever the design, the most units a second this machine's cores could
 * carry at this CPU a unit, every process counted (the server's every thread, the bench's, PostgreSQL's), were they
 * all busy with the work spread without loss; `mainThreadPerSecond`, while the server's main thread does what it does
 * now, the most it can carry (its event loop is one core at most).
 */
export function cpuBounds(spent: CpuSpent, server = 'server'): { perSecond: number; mainThreadPerSecond: number | null } {
  const total = spent.perUnit.reduce((sum, p) => sum + p.ms, 0);
  const own = spent.perUnit.find((p) => p.name === server);
  return {
    perSecond: total > 0 ? (1000 * cpus().length) / total : Number.POSITIVE_INFINITY,
    mainThreadPerSecond: own?.mainThreadMs ? 1000 / own.mainThreadMs : null,
  };
}

/** The bounds as a note: "at this CPU a send, every core busy: at most 4,659 sends/s, 0.21 of the no-op route; …". */
export function boundsText(spent: CpuSpent, unit: string, units: string, baseline: { rate: number; name: string }): string {
  const { perSecond, mainThreadPerSecond } = cpuBounds(spent);
  const share = (rate: number) => `${Math.round(rate).toLocaleString('en-US')} ${units}/s, ${(rate / baseline.rate).toFixed(2)} of ${baseline.name}`;
  const cores = `at this CPU a ${unit}, every core busy: at most ${share(perSecond)}`;
  return mainThreadPerSecond === null ? cores : `${cores}; its main thread alone: at most ${share(mainThreadPerSecond)}`;
}
