/**
 * `npm run bench`: starts Tern on fresh SQLite databases in their own processes and prints one table: a no-op route
 * as the baseline, durable sends at concurrency 64, their ratio, end-to-end throughput (accepted → DELIVERED) with the
 * simulator at zero latency, the SMPP door, and an operator connection (Tern to Tern over SMPP).
 * `npm run bench http|smpp|operator` runs one group.
 */
import { httpCases } from './http.ts';
import { runOperatorBench } from './operator.ts';
import { runSmppBench } from './smpp.ts';
import { DURATION_S, printTable, type Row } from './support.ts';

async function main(): Promise<void> {
  const only = process.argv[2];
  const rows: Row[] = [];
  if (!only || only === 'http') rows.push(...(await httpCases()));
  if (!only || only === 'smpp') rows.push(...(await runSmppBench()));
  if (!only || only === 'operator') rows.push(...(await runOperatorBench()));
  console.log(`\nTern benchmark — ${new Date().toISOString()}, node ${process.version}, ${DURATION_S} s per load case\n`);
  printTable(rows);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
