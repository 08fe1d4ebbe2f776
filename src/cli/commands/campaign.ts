import { createHash } from 'node:crypto';
import cliProgress from 'cli-progress';
import { ApiError, query } from '../client.ts';
import type { Context } from '../context.ts';
import { CampaignCsvError, csvRecipients } from '../../domain/campaign-csv.ts';
import type { CsvRecord } from '../../domain/csv.ts';
import { type Recipient, readCsvFile, recipientsOf } from '../csv.ts';
import { CliError, colours, EXIT } from '../io.ts';
import { facts, json, line, status } from '../output.ts';
import { apiOf, type MessageType } from './messages.ts';

export interface CampaignOptions {
  text?: string;
  /** A template of the channel: each row's other columns are its variables' values, by header. */
  template?: string;
  from?: string;
  at?: string;
  rcs?: boolean;
  concurrency?: string;
  json?: boolean;
}

type Row = Recipient & { values?: Record<string, string> };

/** A template campaign's rows: a header, a number column, and the variables' values by header. */
function templateRowsOf(file: string, records: CsvRecord[]): Row[] {
  try {
    return csvRecipients(records).map((r, i) => ({ line: records[i + 1]!.line, to: r.to, ...(r.refClient && { refClient: r.refClient }), values: r.values }));
  } catch (err) {
    if (err instanceof CampaignCsvError) throw new CliError(`${file}: ${err.message}`, EXIT.USAGE);
    throw err;
  }
}

interface Outcome {
  line: number;
  to: string;
  messageId?: string;
  replayed?: boolean;
  error?: string;
  /** The errorCode of a refused row. */
  errorCode?: string;
}

/** The statuses of a message that will not be delivered. */
const FAILED_STATUSES = ['UNDELIVERABLE', 'UNDELIVERED'] as const;

/** Reasons by count, most first, with the credit running out always first: it is the one to act on. */
export function byReason(reasons: Iterable<string>): Array<[string, number]> {
  const counts = new Map<string, number>();
  for (const r of reasons) counts.set(r, (counts.get(r) ?? 0) + 1);
  const rank = (r: string) => (r === 'INSUFFICIENT_CREDIT' ? 0 : 1);
  return [...counts].sort((a, b) => rank(a[0]) - rank(b[0]) || b[1] - a[1] || a[0].localeCompare(b[0]));
}

/** Every message of the campaign that will not be delivered, by `status.value` then `status.detail`. */
async function failedByReason(client: Context['client'], api: string, campaignId: string): Promise<Record<string, Array<[string, number]>>> {
  const out: Record<string, Array<[string, number]>> = {};
  for (const value of FAILED_STATUSES) {
    const reasons: string[] = [];
    for (let page = 1; ; page++) {
      const res = await client.get(`${api}/messages${query({ 'searchBy[campaignId]': campaignId, 'searchBy[status.value]': value, page, pageSize: 100 })}`, {
        retries: Infinity,
      });
      for (const m of res.items as Array<{ status?: { detail?: string } }>) reasons.push(m.status?.detail ?? 'UNKNOWN');
      if (res.items.length < 100) break;
    }
    if (reasons.length > 0) out[value] = byReason(reasons);
  }
  return out;
}

/**
 * `tern campaign send FILE.csv`: one campaign, one message a row. The campaign is named after the file's content
 * (its refClient), and each row is sent with an Idempotency-Key of the file and the row: running the same command
 * again (after a crash, a lost connection, a Ctrl-C) finds the campaign and sends only what was not sent, within the
 * 24 h Tern remembers idempotency keys.
 */
export async function campaignSend(ctx: Context, file: string, o: CampaignOptions): Promise<void> {
  const { text: content, records } = readCsvFile(file);
  if (o.template !== undefined && (o.text !== undefined || o.rcs)) throw new CliError('--template: SMS only, and not with --text', EXIT.USAGE);
  const rows: Row[] = o.template === undefined ? recipientsOf(records) : templateRowsOf(file, records);
  if (rows.length === 0) throw new CliError(`${file}: no rows`, EXIT.USAGE);
  const missingText = rows.find((r) => r.text === undefined && o.text === undefined && o.template === undefined);
  if (missingText) throw new CliError(`${file}: line ${missingText.line}: no text (add a text column or --text)`, EXIT.USAGE);
  const concurrency = o.concurrency === undefined ? 8 : Number(o.concurrency);
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 64) throw new CliError('--concurrency: a whole number from 1 to 64', EXIT.USAGE);
  const type: MessageType = o.rcs ? 'RCS' : 'SMS';
  const api = apiOf(type);
  const client = ctx.client;
  const run = createHash('sha256')
    .update(content)
    .update('\0')
    .update(o.text ?? '')
    .update('\0')
    .update(o.from ?? '')
    .update('\0')
    .update(type)
    .update(o.template === undefined ? '' : `\0${o.template}`)
    .digest('hex')
    .slice(0, 24);
  const campaignRef = `tern-cli:${run}`;
  const bodyOf = (text: string) => (type === 'SMS' ? { text } : { type: 'TEXT', text });
  // A row's values of the template's own variables (a send refuses others; the file may have more columns).
  let variables: string[] = [];
  const valuesOf = (r: Row) => Object.fromEntries(Object.entries(r.values ?? {}).filter(([k]) => variables.includes(k)));
  const contentOf = (r: Row) => (o.template === undefined ? { body: bodyOf(r.text ?? o.text!) } : { template: { id: o.template, values: valuesOf(r) } });
  const messageOf = (r: Row) => ({
    recipient: { to: r.to },
    ...contentOf(r),
    ...(r.refClient && { refClient: r.refClient }),
    ...(o.from && { from: o.from }),
    ...(o.at && { sentDate: o.at }),
  });

  // A 429 is waited out, as long as it takes: the command ends with every row sent or refused. A wait is shown on the
  // progress line.
  let waiting = 0;
  const patient = { retries: Infinity, onWait: () => waiting++ };
  // The campaign of this file: found again when resuming, else made with the file's first row.
  const found = await client.get(`${api}/campaigns${query({ 'searchBy[refClient]': campaignRef, pageSize: 1 })}`, patient);
  let campaign = found.items[0];
  const outcomes: Outcome[] = [];
  let start = 0;
  if (!campaign) {
    const first = rows[0]!;
    campaign = await client.post(
      `${api}/campaigns`,
      {
        recipients: [{ to: first.to, ...(first.refClient && { refClient: first.refClient }), ...(first.values && { values: first.values }) }],
        refClient: campaignRef,
        ...(o.template === undefined ? { body: bodyOf(first.text ?? o.text!) } : { template: { id: o.template } }),
        ...(o.from && { from: o.from }),
        ...(o.at && { sentDate: o.at }),
      },
      patient,
    );
    const refused = campaign.errors?.[0];
    outcomes.push(
      refused
        ? { line: first.line, to: first.to, error: `${refused.errorCode}: ${refused.detail}`, errorCode: refused.errorCode }
        : { line: first.line, to: first.to },
    );
    start = 1;
  } else {
    // Resuming: the first row went with the campaign's creation.
    outcomes.push({ line: rows[0]!.line, to: rows[0]!.to, replayed: true });
    start = 1;
  }
  if (o.template !== undefined) {
    const template = await client.get(`${api}/channels/${campaign.channel.channelId}/templates/${encodeURIComponent(o.template)}`, patient);
    variables = template.variables;
  }
  if (!o.json) ctx.io.stderr.write(`Campaign ${campaign.campaignId} (${campaignRef}): ${rows.length} rows\n`);

  const bar = new cliProgress.SingleBar(
    {
      stream: ctx.io.stderr as NodeJS.WriteStream,
      format: 'sending {bar} {value}/{total} rows | {rate} rows/s | ETA {eta_formatted} | refused {refused} | waited {waited} times for the rate limit',
      noTTYOutput: false,
      hideCursor: true,
      etaBuffer: 50,
    },
    cliProgress.Presets.shades_classic,
  );
  const startedAt = Date.now();
  let refused = outcomes.filter((x) => x.error).length;
  const showBar = !o.json && Boolean(ctx.io.stderr.isTTY);
  if (showBar) bar.start(rows.length, 1, { rate: '0', refused, waited: 0 });
  let next = start;
  let done = 1;
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= rows.length) return;
      const r = rows[i]!;
      try {
        const res = await client.call('POST', `${api}/campaigns/${campaign.campaignId}/messages`, {
          body: messageOf(r),
          headers: { 'idempotency-key': `${run}-${r.line}` },
          ...patient,
        });
        outcomes.push({ line: r.line, to: r.to, messageId: res.body.messageId, replayed: res.headers.get('idempotent-replayed') === 'true' });
      } catch (err) {
        if (!(err instanceof ApiError) || err.exitCode === EXIT.UNAVAILABLE || err.exitCode === EXIT.AUTH) {
          if (showBar) bar.stop();
          throw new CliError(
            `${err instanceof Error ? err.message : String(err)} — stopped at line ${r.line}; run the same command again to go on`,
            (err as CliError).exitCode ?? EXIT.FAILED,
          );
        }
        refused++;
        outcomes.push({ line: r.line, to: r.to, error: `${err.errorCode}: ${err.detail}`, errorCode: err.errorCode });
      }
      done++;
      if (showBar) bar.update(done, { rate: (done / Math.max(0.001, (Date.now() - startedAt) / 1000)).toFixed(0), refused, waited: waiting });
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, Math.max(1, rows.length - start)) }, worker));
  if (showBar) bar.stop();

  const final = await client.get(`${api}/campaigns/${campaign.campaignId}`, patient);
  const failed = await failedByReason(client, api, campaign.campaignId);
  const errors = outcomes.filter((x) => x.error).sort((a, b) => a.line - b.line);
  const refusedByReason = byReason(errors.map((e) => e.errorCode ?? 'UNKNOWN'));
  const replayed = outcomes.filter((x) => x.replayed).length;
  const sentNow = rows.length - errors.length - replayed;
  const failedCount = Object.values(failed)
    .flat()
    .reduce((n, [, c]) => n + c, 0);
  const seconds = (Date.now() - startedAt) / 1000;
  if (errors.length > 0 || failedCount > 0) ctx.exitCode = EXIT.PARTIAL;
  if (o.json) {
    return json(ctx.io, {
      campaignId: final.campaignId,
      refClient: campaignRef,
      rows: rows.length,
      accepted: rows.length - errors.length,
      sent: sentNow,
      alreadySent: replayed,
      refused: errors.map((e) => ({ line: e.line, to: e.to, error: e.error })),
      refusedByReason: Object.fromEntries(refusedByReason),
      counts: final.counts,
      failedByReason: Object.fromEntries(Object.entries(failed).map(([k, v]) => [k, Object.fromEntries(v)])),
      rateLimitWaits: waiting,
    });
  }
  const c = colours(ctx.io);
  const reasons = (list: Array<[string, number]>) => list.map(([k, v]) => `${k} ${v}`).join(', ');
  facts(ctx.io, [
    ['Campaign', final.campaignId],
    ['Rows', rows.length],
    ['Accepted', `${rows.length - errors.length} (${sentNow} now in ${seconds.toFixed(1)} s${replayed ? `, ${replayed} already sent` : ''})`],
    ['Refused', errors.length ? `${c.red(String(errors.length))} (${reasons(refusedByReason)})` : '0'],
    ...FAILED_STATUSES.map((value): [string, unknown] => {
      const list = failed[value] ?? [];
      const total = list.reduce((n, [, v]) => n + v, 0);
      return [value[0] + value.slice(1).toLowerCase(), total ? `${c.red(String(total))} (${reasons(list)})` : '0'];
    }),
    [
      'Statuses',
      Object.entries(final.counts.byStatus as Record<string, number>)
        .map(([k, v]) => `${status(ctx.io, k)} ${v}`)
        .join(', '),
    ],
    ['Rate limit', waiting ? `waited ${waiting} times, as Retry-After asked` : undefined],
  ]);
  for (const e of errors.slice(0, 20)) line(ctx.io, `  line ${e.line} (${e.to}): ${e.error}`);
  if (errors.length > 20) line(ctx.io, `  … and ${errors.length - 20} more (--json lists them all)`);
}
