import { randomUUID } from 'node:crypto';
import { follow, query } from '../client.ts';
import type { Context } from '../context.ts';
import { CliError, colours, EXIT } from '../io.ts';
import { bodyText, date, euros, facts, json, line, status, table } from '../output.ts';

export const FINAL = new Set(['DELIVERED', 'UNDELIVERABLE', 'UNDELIVERED', 'READ', 'CANCELLED']);
const DELIVERED = new Set(['DELIVERED', 'READ']);

export type MessageType = 'SMS' | 'RCS' | 'VOICE';

export function apiOf(type: MessageType): string {
  return `/${type.toLowerCase()}/v1`;
}

/** The type named by `--type`, else the key's channel type (SMS when the key may not read its channel). */
export async function typeOf(ctx: Context, option: string | undefined): Promise<MessageType> {
  if (option) {
    const t = option.toUpperCase();
    if (t !== 'SMS' && t !== 'RCS' && t !== 'VOICE') throw new CliError(`--type: must be sms, rcs or voice, not "${option}"`, EXIT.USAGE);
    return t;
  }
  try {
    const channels = await ctx.client.get('/commons/v1/channels');
    return (channels.items[0]?.type ?? 'SMS') as MessageType;
  } catch (err) {
    if ((err as { status?: number }).status === 403) return 'SMS';
    throw err;
  }
}

function summary(ctx: Context, m: any): string {
  const c = colours(ctx.io);
  const parts = m.body?.messagePartCount ? `, ${m.body.messagePartCount} part${m.body.messagePartCount > 1 ? 's' : ''}` : '';
  const price = m.price ? `, ${euros(m.price.amount)}` : '';
  return `${c.bold(m.messageId)} ${m.direction === 'MO' ? 'from' : 'to'} ${m.direction === 'MO' ? m.from : m.recipient.to}: ${status(ctx.io, m.status?.value ?? 'RECEIVED', m.status?.detail)}${parts}${price}`;
}

export interface SendOptions {
  rcs?: boolean;
  voice?: boolean;
  from?: string;
  ref?: string;
  at?: string;
  unicode?: boolean;
  stop?: boolean;
  title?: string;
  language?: string;
  fallback?: string;
  callback?: string;
  idempotencyKey?: string;
  wait?: boolean;
  timeout?: string;
  json?: boolean;
}

/** `tern send NUMBER TEXT`: one message; `--wait` follows it until its status is final. */
export async function send(ctx: Context, number: string, text: string, o: SendOptions): Promise<void> {
  if (o.rcs && o.voice) throw new CliError('--rcs and --voice: choose one', EXIT.USAGE);
  const type: MessageType = o.rcs ? 'RCS' : o.voice ? 'VOICE' : 'SMS';
  const common = {
    recipient: { to: number },
    ...(o.from && { from: o.from }),
    ...(o.ref && { refClient: o.ref }),
    ...(o.at && { sentDate: o.at }),
    ...(o.callback && { callbackUrlStatus: o.callback }),
  };
  const body =
    type === 'SMS'
      ? { ...common, body: { text, ...(o.unicode && { encoding: 'UNICODE' }), ...(o.stop && { stop: true }) } }
      : type === 'RCS'
        ? { ...common, body: { type: 'TEXT', text }, ...(o.fallback && { fallback: { text: o.fallback } }) }
        : { ...common, body: { text, ...(o.title && { title: o.title }), ...(o.language && { language: o.language }) } };
  const client = ctx.client;
  const sent = await client.post(`${apiOf(type)}/messages`, body, { headers: { 'idempotency-key': o.idempotencyKey ?? randomUUID() } });
  if (!o.wait) {
    if (o.json) json(ctx.io, sent);
    else line(ctx.io, `Sent ${summary(ctx, sent)}`);
    return;
  }
  if (!o.json) line(ctx.io, `Sent ${summary(ctx, sent)}`);
  const final = await waitFinal(ctx, type, sent, o);
  if (o.json) json(ctx.io, final);
  else if (final.messageId) line(ctx.io, `Final: ${summary(ctx, final)}`);
  if (!DELIVERED.has(final.status?.value)) ctx.exitCode = EXIT.NOT_DELIVERED;
}

async function waitFinal(ctx: Context, type: MessageType, sent: any, o: SendOptions): Promise<any> {
  if (FINAL.has(sent.status?.value)) return sent;
  const timeoutS = o.timeout === undefined ? 120 : Number(o.timeout);
  if (!Number.isFinite(timeoutS) || timeoutS <= 0) throw new CliError(`--timeout: a number of seconds, not "${o.timeout}"`, EXIT.USAGE);
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), timeoutS * 1000);
  let current = sent;
  let shown = sent.status?.value;
  const show = (m: any) => {
    current = m;
    if (!o.json && m.status?.value !== shown) line(ctx.io, `  ${date(m.status?.deliveryDate)} ${status(ctx.io, m.status?.value, m.status?.detail)}`);
    shown = m.status?.value;
    return FINAL.has(m.status?.value);
  };
  try {
    await follow(ctx.client, {
      type,
      signal: abort.signal,
      // Listening: the message as it is now, in case it settled before the stream opened.
      onReady: async () => {
        if (show(await ctx.client.get(`${apiOf(type)}/messages/${sent.messageId}`))) abort.abort();
      },
      onEvent: (e) => (e.message.messageId === sent.messageId && show(e.message) ? false : undefined),
    });
  } finally {
    clearTimeout(timer);
  }
  if (!FINAL.has(current.status?.value)) {
    throw new CliError(`${sent.messageId} is still ${current.status?.value} after ${timeoutS} s (--timeout)`, EXIT.NOT_DELIVERED);
  }
  return current;
}

export interface ListOptions {
  type?: string;
  status?: string;
  direction?: string;
  to?: string;
  ref?: string;
  campaign?: string;
  since?: string;
  until?: string;
  limit?: string;
  json?: boolean;
}

function count(value: string | undefined, name: string, fallback: number, max = 100_000): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > max) throw new CliError(`${name}: a whole number from 1 to ${max}, not "${value}"`, EXIT.USAGE);
  return n;
}

export async function list(ctx: Context, o: ListOptions): Promise<void> {
  const type = await typeOf(ctx, o.type);
  const limit = count(o.limit, '--limit', 20);
  const items: any[] = [];
  for (let page = 1; items.length < limit; page++) {
    const pageSize = Math.min(100, limit);
    const res = await ctx.client.get(
      `${apiOf(type)}/messages${query({
        page,
        pageSize,
        'searchBy[status.value]': o.status?.toUpperCase(),
        'searchBy[direction]': o.direction?.toUpperCase(),
        'searchBy[recipient.to]': o.to,
        'searchBy[refClient]': o.ref,
        'searchBy[campaignId]': o.campaign,
        startDate: o.since,
        endDate: o.until,
      })}`,
    );
    items.push(...res.items);
    if (res.items.length < pageSize) break;
  }
  const shown = items.slice(0, limit);
  if (o.json) return json(ctx.io, shown);
  if (shown.length === 0) return line(ctx.io, 'No messages (the last 10 days unless --since says otherwise).');
  table(
    ctx.io,
    ['id', 'date', 'to / from', 'status', 'price', 'text'],
    shown.map((m) => [
      m.messageId,
      date(m.acceptedAt),
      m.direction === 'MO' ? m.from : m.recipient.to,
      status(ctx.io, m.status?.value ?? 'RECEIVED', m.status?.detail),
      m.price ? euros(m.price.amount) : '',
      bodyText(m.body).slice(0, 40),
    ]),
  );
}

export async function getOne(ctx: Context, id: string, o: { type?: string; json?: boolean }): Promise<void> {
  const type = await typeOf(ctx, o.type);
  const m = await ctx.client.get(`${apiOf(type)}/messages/${encodeURIComponent(id)}`);
  const events = await ctx.client.get(`${apiOf(type)}/messages/${encodeURIComponent(id)}/events`);
  if (o.json) return json(ctx.io, { ...m, events: events.items });
  facts(ctx.io, [
    ['Message', m.messageId],
    ['Type', `${m.type} ${m.direction}`],
    [m.direction === 'MO' ? 'From' : 'To', m.direction === 'MO' ? m.from : m.recipient.to],
    ['Sender', m.direction === 'MT' ? m.from : undefined],
    ['Status', status(ctx.io, m.status?.value ?? 'RECEIVED', m.status?.detail)],
    ['Price', m.price ? `${euros(m.price.amount)}${m.price.kind ? ` (${m.price.kind})` : ''}` : undefined],
    ['Parts', m.body?.messagePartCount ? `${m.body.messagePartCount} (${m.body.encoding}, ${m.body.length} units)` : undefined],
    ['Accepted', date(m.acceptedAt)],
    ['Send date', date(m.sentDate)],
    ['refClient', m.refClient],
    ['Campaign', m.campaignId],
    ['Text', bodyText(m.body)],
  ]);
  line(ctx.io);
  line(ctx.io, 'Timeline:');
  for (const e of events.items) line(ctx.io, `  ${date(e.date)}  ${status(ctx.io, e.status, e.detail)}`);
}

/** `tern messages tail`: each new message and status change as it happens (one JSON object a line with --json). */
export async function tail(ctx: Context, o: { type?: string; json?: boolean; max?: string }): Promise<void> {
  const max = o.max === undefined ? Infinity : count(o.max, '--max', 1, 1_000_000_000);
  const type = o.type ? await typeOf(ctx, o.type) : undefined;
  let seen = 0;
  const abort = new AbortController();
  const stop = () => abort.abort();
  process.once('SIGINT', stop);
  try {
    if (!o.json) ctx.io.stderr.write(`Following the messages of ${ctx.client.conn.url} (Ctrl-C to stop)\n`);
    await follow(ctx.client, {
      ...(type && { type }),
      signal: abort.signal,
      onEvent: (e) => {
        if (o.json) ctx.io.stdout.write(`${JSON.stringify(e)}\n`);
        else {
          const m = e.message;
          line(
            ctx.io,
            `${date(e.date)}  ${m.messageId}  ${m.type} ${m.direction} ${m.direction === 'MO' ? m.from : m.recipient.to}  ${status(ctx.io, e.status, e.detail)}${e.kind === 'ACCEPTED' || m.direction === 'MO' ? `  ${bodyText(m.body).slice(0, 50)}` : ''}`,
          );
        }
        return ++seen < max ? undefined : false;
      },
    });
  } finally {
    process.off('SIGINT', stop);
  }
}
