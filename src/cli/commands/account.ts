import { randomUUID } from 'node:crypto';
import cliProgress from 'cli-progress';
import { ApiError, query } from '../client.ts';
import type { Context } from '../context.ts';
import { readCsvFile } from '../csv.ts';
import { CliError, colours, EXIT } from '../io.ts';
import { date, euros, facts, json, line, table } from '../output.ts';

const LOOKUP_BATCH = 100;

function lookupRow(x: any): unknown[] {
  if (x.error) return [x.input, '', '', '', '', `${x.error.errorCode}: ${x.error.detail}`];
  return [
    x.input ?? x.msisdn,
    x.valid ? 'yes' : 'no',
    x.type,
    x.country,
    x.currentNetwork?.name ?? x.network,
    x.reachable === undefined ? '' : x.reachable ? 'reachable' : 'absent',
  ];
}

/** `tern lookup NUMBER…` and `tern lookup --file FILE` (bulk, in batches, with a progress bar). */
export async function lookup(ctx: Context, numbers: string[], o: { file?: string; json?: boolean }): Promise<void> {
  let inputs = [...numbers];
  if (o.file) {
    const rows = readCsvFile(o.file).records.map((r) => (r.fields[0] ?? '').trim());
    inputs.push(...(rows[0] && !/\d/.test(rows[0]) ? rows.slice(1) : rows));
  }
  inputs = inputs.filter((n) => n !== '');
  if (inputs.length === 0) throw new CliError('no number: give numbers or --file', EXIT.USAGE);
  const results: any[] = [];
  if (inputs.length === 1 && !o.file) {
    try {
      results.push({ input: inputs[0], ...(await ctx.client.get(`/commons/v1/lookup/${encodeURIComponent(inputs[0]!)}`)) });
    } catch (err) {
      if (!(err instanceof ApiError) || err.status !== 400) throw err;
      results.push({ input: inputs[0], error: { errorCode: err.errorCode, detail: err.detail } });
    }
  } else {
    const showBar = !o.json && Boolean(ctx.io.stderr.isTTY);
    const bar = new cliProgress.SingleBar(
      { stream: ctx.io.stderr as NodeJS.WriteStream, format: 'looking up {bar} {value}/{total} | ETA {eta_formatted}', noTTYOutput: false },
      cliProgress.Presets.shades_classic,
    );
    if (showBar) bar.start(inputs.length, 0);
    try {
      for (let i = 0; i < inputs.length; i += LOOKUP_BATCH) {
        const res = await ctx.client.post('/commons/v1/lookup', { msisdns: inputs.slice(i, i + LOOKUP_BATCH) });
        results.push(...res.items);
        if (showBar) bar.update(results.length);
      }
    } finally {
      if (showBar) bar.stop();
    }
  }
  const refused = results.filter((r) => r.error).length;
  if (refused > 0) ctx.exitCode = results.length === refused && results.length === 1 ? EXIT.FAILED : EXIT.PARTIAL;
  if (o.json) return json(ctx.io, o.file || results.length > 1 ? results : results[0]);
  table(ctx.io, ['number', 'valid', 'type', 'country', 'network', 'live'], results.map(lookupRow));
}

function isoDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** A bar a line: `2026-11 ████████ 12.50 €`. */
function chart(ctx: Context, rows: Array<[string, number]>): void {
  const c = colours(ctx.io);
  const max = Math.max(...rows.map(([, v]) => v), 0);
  const width = 40;
  const label = Math.max(...rows.map(([k]) => k.length));
  for (const [k, v] of rows) {
    const cells = max > 0 ? (v / max) * width : 0;
    const full = Math.floor(cells);
    const bar = '█'.repeat(full) + (cells - full >= 0.5 ? '▌' : '');
    line(ctx.io, `${k.padEnd(label)} ${c.cyan(bar.padEnd(width + 1))} ${euros(v)}`);
  }
}

/** `tern consumption`: what was spent per period (a table, or a bar chart with --chart). */
export async function consumption(ctx: Context, o: { by?: string; type?: string; from?: string; to?: string; chart?: boolean; json?: boolean }): Promise<void> {
  const period = (o.by ?? 'month').toUpperCase();
  if (period !== 'DAY' && period !== 'MONTH') throw new CliError('--by: day or month', EXIT.USAGE);
  const type = (o.type ?? 'SMS').toUpperCase();
  if (!['SMS', 'RCS', 'VOICE', 'LOOKUP'].includes(type)) throw new CliError('--type: sms, rcs, voice or lookup', EXIT.USAGE);
  const now = Date.now();
  const startDate = o.from ?? isoDay(period === 'DAY' ? now - 29 * 86_400_000 : now - 365 * 86_400_000);
  const endDate = o.to ?? isoDay(now);
  const records: any[] = [];
  for (let page = 1; page <= 100; page++) {
    const res = await ctx.client.get(
      `/commons/v1/consumptions${query({ 'searchBy[periodType]': period, 'searchBy[channel.type]': type, startDate, endDate, page, pageSize: 100 })}`,
    );
    records.push(...res.items);
    if (res.items.length < 100) break;
  }
  if (o.json) return json(ctx.io, records);
  const byPeriod = new Map<string, { quantity: number; amount: number }>();
  for (const r of records) {
    const key = period === 'MONTH' ? r.startDate.slice(0, 7) : r.startDate;
    const p = byPeriod.get(key) ?? { quantity: 0, amount: 0 };
    p.quantity += r.quantity;
    p.amount += r.price.amount;
    byPeriod.set(key, p);
  }
  const rows = [...byPeriod.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1));
  if (rows.length === 0) return line(ctx.io, `No ${type} consumption from ${startDate} to ${endDate}.`);
  if (o.chart)
    return chart(
      ctx,
      rows.map(([k, v]) => [k, Math.round(v.amount * 1e6) / 1e6]),
    );
  table(
    ctx.io,
    ['period', 'units', 'spent'],
    [
      ...rows.map(([k, v]) => [k, v.quantity, euros(Math.round(v.amount * 1e6) / 1e6)]),
      ['total', rows.reduce((n, [, v]) => n + v.quantity, 0), euros(Math.round(rows.reduce((n, [, v]) => n + v.amount, 0) * 1e6) / 1e6)],
    ],
  );
}

async function ownOrganisationId(ctx: Context): Promise<string> {
  const channels = await ctx.client.get('/commons/v1/channels');
  return channels.items[0].organisationId;
}

/** `tern balance`: the organisation's balance and its latest ledger entries. */
export async function balance(ctx: Context, o: { ledger?: string; json?: boolean }): Promise<void> {
  const id = await ownOrganisationId(ctx);
  const org = await ctx.client.get(`/commons/v1/organisations/${id}`);
  const n = o.ledger === undefined ? 10 : Number(o.ledger);
  if (!Number.isInteger(n) || n < 0 || n > 100) throw new CliError('--ledger: a whole number from 0 to 100', EXIT.USAGE);
  const ledger = n > 0 ? (await ctx.client.get(`/commons/v1/organisations/${id}/ledger${query({ pageSize: n })}`)).items : [];
  if (o.json) return json(ctx.io, { organisation: org, ledger });
  facts(ctx.io, [
    ['Organisation', `${org.name} (${org.organisationId})`],
    ['Balance', euros(org.balance.amount)],
    ['This month', `${euros(org.monthlyConsumption)}${org.monthlyConsumptionLimit !== undefined ? ` of ${euros(org.monthlyConsumptionLimit)}` : ''}`],
    ['Billing', org.balance.parentBilling ? 'by the parent organisation' : undefined],
  ]);
  if (ledger.length > 0) {
    line(ctx.io);
    table(
      ctx.io,
      ['date', 'kind', 'amount', 'balance', 'description'],
      ledger.map((e: any) => [date(e.creationDate), e.kind, euros(e.amount), euros(e.balance), e.description ?? e.reference ?? '']),
    );
  }
}

/** `tern transfer AMOUNT --to ORG` (to a sub-organisation) or `--from ORG` (back from one). */
export async function transfer(
  ctx: Context,
  amount: string,
  o: { to?: string; from?: string; reference?: string; idempotencyKey?: string; json?: boolean },
): Promise<void> {
  if (Boolean(o.to) === Boolean(o.from)) throw new CliError('give --to ORGANISATION or --from ORGANISATION (one of them)', EXIT.USAGE);
  const own = await ownOrganisationId(ctx);
  const source = o.to ? own : o.from!;
  const destination = o.to ?? own;
  const t = await ctx.client.post(
    `/commons/v1/organisations/${source}/transfers`,
    { organisationDestination: { organisationId: destination }, amount, ...(o.reference && { reference: o.reference }) },
    { headers: { 'idempotency-key': o.idempotencyKey ?? randomUUID() } },
  );
  if (o.json) return json(ctx.io, t);
  line(ctx.io, `Moved ${euros(t.amount)} from ${t.organisationSource.name} to ${t.organisationDestination.name} (transfer ${t.transferId}).`);
}
