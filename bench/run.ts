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
 * - traffic: OTP latency under a draining campaign, and one tenant's latency while another floods (traffic.ts).
 * `npm run bench <group> [<group>…]` runs some of them.
 */
import { postgresUnavailable } from './databases.ts';
import { runEndToEndBench } from './e2e.ts';
import { httpCases } from './http.ts';
import { runOperatorBench } from './operator.ts';
import { fromRows, printResults, type Result } from './report.ts';
import { runSmppBench } from './smpp.ts';
import { runStoredBench } from './stored.ts';
import { DURATION_S } from './support.ts';
import { runTrafficBench } from './traffic.ts';
import { runVoiceBench } from './voice.ts';

const GROUPS: Record<string, () => Promise<Result[]>> = {
  http: httpCases,
  e2e: runEndToEndBench,
  smpp: runSmppBench,
  stored: runStoredBench,
  operator: runOperatorBench,
  voice: async () => fromRows(await runVoiceBench()),
  traffic: async () => fromRows(await runTrafficBench()),
};

async function main(): Promise<void> {
  const asked = process.argv.slice(2);
  const unknown = asked.filter((g) => !(g in GROUPS));
  if (unknown.length > 0) throw new Error(`unknown group ${unknown.join(', ')}: choose among ${Object.keys(GROUPS).join(', ')}`);
  const results: Result[] = [];
  for (const [name, run] of Object.entries(GROUPS)) {
    if (asked.length === 0 || asked.includes(name)) results.push(...(await run()));
  }
  const postgres = (await postgresUnavailable()) ?? 'measured';
  console.log(`\nTern benchmark — ${new Date().toISOString()}, node ${process.version}, ${DURATION_S} s per timed load; PostgreSQL ${postgres}\n`);
  printResults(results);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
