/**
 * `npm run bench`: starts Tern in its own processes, on SQLite and (when a PostgreSQL URL is given and answers) on
 * PostgreSQL, and prints one table, each row with its target, the figure on SQLite and on PostgreSQL beside it, and
 * whether each meets the target:
 * - http: a no-op route as the baseline, durable sends at 64 connections and their ratio (http.ts);
 * - e2e: REST send → DELIVERED → signed status webhook, against Kannel measured in the same run (e2e.ts, kannel.ts);
 * - smpp: the SMPP door against the `smpp` package's loopback, receipts, then the server's memory at rest with
 *   1,000,000 messages stored (smpp.ts);
 * - stored: consumption and message listing with 10,000,000 messages stored (stored.ts, fill.ts);
 * - operator: Tern to Tern over SMPP (operator.ts, SQLite);
 * - voice: text-to-speech, and SMS sends under a burst of voice sends (voice.ts, SQLite);
 * - traffic: OTP latency under a draining campaign, marketing sends beside a campaign scheduled for tomorrow, and one
 *   tenant's latency while another floods (traffic.ts);
 * - webhooks: status webhooks to one receiver while another, silent, is far behind (webhooks.ts).
 * `npm run bench <group> [<group>…]` runs some of them.
 * `npm run bench -- --cluster N` (PostgreSQL only, run only when asked): 1 to N Tern processes on one database, the
 * e2e load spread over them, and what each message costs the cluster in CPU and statements (cluster.ts).
 */
import { spawnSync } from 'node:child_process';
import { postgresUnavailable } from './databases.ts';
import { runClusterBench } from './cluster.ts';
import { runEndToEndBench } from './e2e.ts';
import { httpCases } from './http.ts';
import { runOperatorBench } from './operator.ts';
import { fromRows, printResults, type Result } from './report.ts';
import { runSmppBench } from './smpp.ts';
import { runStoredBench } from './stored.ts';
import { DURATION_S } from './support.ts';
import { runTrafficBench } from './traffic.ts';
import { runVoiceBench } from './voice.ts';
import { runWebhooksBench } from './webhooks.ts';

const GROUPS: Record<string, () => Promise<Result[]>> = {
  http: httpCases,
  e2e: runEndToEndBench,
  smpp: runSmppBench,
  stored: runStoredBench,
  operator: runOperatorBench,
  voice: async () => fromRows(await runVoiceBench()),
  traffic: async () => fromRows(await runTrafficBench()),
  webhooks: runWebhooksBench,
};

/** The groups asked for, and the largest cluster asked for with `--cluster N` (or `--cluster=N`), if any. */
function parseArgs(args: string[]): { groups: string[]; cluster: number | null } {
  const groups: string[] = [];
  let cluster: number | null = null;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg !== '--cluster' && !arg.startsWith('--cluster=')) {
      groups.push(arg);
      continue;
    }
    const value = arg === '--cluster' ? args[++i] : arg.slice('--cluster='.length);
    cluster = Number(value);
    if (!Number.isInteger(cluster) || cluster < 1) throw new Error(`--cluster takes the largest node count, a whole number ≥ 1 (got ${value})`);
  }
  return { groups, cluster };
}

async function main(): Promise<void> {
  const { groups: asked, cluster } = parseArgs(process.argv.slice(2));
  const unknown = asked.filter((g) => !(g in GROUPS));
  if (unknown.length > 0) throw new Error(`unknown group ${unknown.join(', ')}: choose among ${Object.keys(GROUPS).join(', ')}, or --cluster N`);
  // The servers measured are the production build (dist/), made afresh when src/ changed since.
  if (spawnSync(process.execPath, ['scripts/build.mjs', '--server', '--if-stale'], { stdio: 'inherit' }).status !== 0) {
    throw new Error('the build failed');
  }
  const results: Result[] = [];
  for (const [name, run] of Object.entries(GROUPS)) {
    if ((asked.length === 0 && cluster === null) || asked.includes(name)) results.push(...(await run()));
  }
  const clusterBench = cluster === null ? null : await runClusterBench(cluster);
  if (clusterBench) results.push(...clusterBench.results);
  const postgres = (await postgresUnavailable()) ?? 'measured';
  console.log(`\nTern benchmark — ${new Date().toISOString()}, node ${process.version}, ${DURATION_S} s per timed load; PostgreSQL ${postgres}\n`);
  printResults(results);
  clusterBench?.print();
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
