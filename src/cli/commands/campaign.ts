import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import cliProgress from 'cli-progress';
import { ApiError, query } from '../client.ts';
import type { Context } from '../context.ts';
import { recipientsOf } from '../csv.ts';
import { CliError, colours, EXIT } from '../io.ts';
import { facts, json, line, status } from '../output.ts';
import { apiOf, type MessageType } from './messages.ts';

export interface CampaignOptions {
  text?: string;
  from?: string;
  at?: string;
  rcs?: boolean;
  concurrency?: string;
  json?: boolean;
}

interface Outcome {
  line: number;
  to: string;
  messageId?: string;
  replayed?: boolean;
  error?: string;
}

/**
 * `tern campaign send FILE.csv`: one campaign, one message a row. The campaign is named after the file's content
 * (its refClient), and each row is sent with an Idempotency-Key of the file and the row: running the same command
 * again (after a crash, a lost connection, a Ctrl-C) finds the campaign and sends only what was not sent, within the
 * 24 h Tern remembers idempotency keys.
 */
export async function campaignSend(ctx: Context, file: string, o: CampaignOptions): Promise<void> {
  let content: string;
  try {
    content = readFileSync(file, 'utf8');
  } catch (err) {
    throw new CliError(`${file}: ${(err as Error).message}`, EXIT.USAGE);
  }
  const rows = recipientsOf(content);
  if (rows.length === 0) throw new CliError(`${file}: no rows`, EXIT.USAGE);
  const missingText = rows.find((r) => r.text === undefined && o.text === undefined);
  if (missingText) throw new CliError(`${file}: line ${missingText.line}: no text (add a text column or --text)`, EXIT.USAGE);
  const concurrency = o.concurrency === undefined ? 8 : Number(o.concurrency);
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 64) throw new CliError('--concurrency: a whole number from 1 to 64', EXIT.USAGE);
  const type: MessageType = o.rcs ? 'RCS' : 'SMS';
  const api = apiOf(type);
  const client = ctx.client;
  const run = createHash('sha256').update(content).update('\0').update(o.text ?? '').update('\0').update(o.from ?? '').update('\0').update(type).digest('hex').slice(0, 24);
  const campaignRef = `tern-cli:${run}`;
  const bodyOf = (text: string) => (type === 'SMS' ? { text } : { type: 'TEXT', text });
  const messageOf = (r: (typeof rows)[number]) => ({
    recipient: { to: r.to },
    body: bodyOf(r.text ?? o.text!),
    ...(r.refClient && { refClient: r.refClient }),
    ...(o.from && { from: o.from }),
    ...(o.at && { sentDate: o.at }),
  });

  // The campaign of this file: found again when resuming, else made with the file's first row.
  const found = await client.get(`${api}/campaigns${query({ 'searchBy[refClient]': campaignRef, pageSize: 1 })}`);
  let campaign = found.items[0];
  const outcomes: Outcome[] = [];
  let start = 0;
  if (!campaign) {
    const first = rows[0]!;
    campaign = await client.post(`${api}/campaigns`, {
      recipients: [{ to: first.to, ...(first.refClient && { refClient: first.refClient }) }],
      refClient: campaignRef,
      body: bodyOf(first.text ?? o.text!),
      ...(o.from && { from: o.from }),
      ...(o.at && { sentDate: o.at }),
    });
    const refused = campaign.errors?.[0];
    outcomes.push(refused ? { line: first.line, to: first.to, error: `${refused.errorCode}: ${refused.detail}` } : { line: first.line, to: first.to });
    start = 1;
  } else {
    // Resuming: the first row went with the campaign's creation.
    outcomes.push({ line: rows[0]!.line, to: rows[0]!.to, replayed: true });
    start = 1;
  }
  if (!o.json) ctx.io.stderr.write(`Campaign ${campaign.campaignId} (${campaignRef}): ${rows.length} rows\n`);

  const bar = new cliProgress.SingleBar(
    {
      stream: ctx.io.stderr as NodeJS.WriteStream,
      format: 'sending {bar} {value}/{total} rows | {rate} rows/s | ETA {eta_formatted} | refused {refused}',
      noTTYOutput: false,
      hideCursor: true,
      etaBuffer: 50,
    },
    cliProgress.Presets.shades_classic,
  );
  const startedAt = Date.now();
  let refused = outcomes.filter((x) => x.error).length;
  const showBar = !o.json && Boolean(ctx.io.stderr.isTTY);
  if (showBar) bar.start(rows.length, 1, { rate: '0', refused });
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
        });
        outcomes.push({ line: r.line, to: r.to, messageId: res.body.messageId, replayed: res.headers.get('idempotent-replayed') === 'true' });
      } catch (err) {
        if (!(err instanceof ApiError) || err.exitCode === EXIT.UNAVAILABLE || err.exitCode === EXIT.AUTH) {
          if (showBar) bar.stop();
          throw new CliError(`${err instanceof Error ? err.message : String(err)} — stopped at line ${r.line}; run the same command again to go on`, (err as CliError).exitCode ?? EXIT.FAILED);
        }
        refused++;
        outcomes.push({ line: r.line, to: r.to, error: `${err.errorCode}: ${err.detail}` });
      }
      done++;
      if (showBar) bar.update(done, { rate: (done / Math.max(0.001, (Date.now() - startedAt) / 1000)).toFixed(0), refused });
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, Math.max(1, rows.length - start)) }, worker));
  if (showBar) bar.stop();

  const final = await client.get(`${api}/campaigns/${campaign.campaignId}`);
  const errors = outcomes.filter((x) => x.error).sort((a, b) => a.line - b.line);
  const replayed = outcomes.filter((x) => x.replayed).length;
  const seconds = (Date.now() - startedAt) / 1000;
  if (errors.length > 0) ctx.exitCode = EXIT.PARTIAL;
  if (o.json) {
    return json(ctx.io, {
      campaignId: final.campaignId,
      refClient: campaignRef,
      rows: rows.length,
      sent: rows.length - errors.length - replayed,
      alreadySent: replayed,
      refused: errors.map((e) => ({ line: e.line, to: e.to, error: e.error })),
      counts: final.counts,
    });
  }
  const c = colours(ctx.io);
  facts(ctx.io, [
    ['Campaign', final.campaignId],
    ['Rows', rows.length],
    ['Sent now', `${rows.length - errors.length - replayed} in ${seconds.toFixed(1)} s`],
    ['Already sent', replayed || undefined],
    ['Refused', errors.length ? c.red(String(errors.length)) : '0'],
    ['Statuses', Object.entries(final.counts.byStatus as Record<string, number>).map(([k, v]) => `${status(ctx.io, k)} ${v}`).join(', ')],
  ]);
  for (const e of errors.slice(0, 20)) line(ctx.io, `  line ${e.line} (${e.to}): ${e.error}`);
  if (errors.length > 20) line(ctx.io, `  … and ${errors.length - 20} more (--json lists them all)`);
}
