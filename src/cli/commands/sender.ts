import type { Context } from '../context.ts';
import { CliError, EXIT } from '../io.ts';
import { date, json, line, status, table } from '../output.ts';

const admin = { admin: true };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function path(organisationId: string, senderId?: string): string {
  const base = `/admin/v1/organisations/${encodeURIComponent(organisationId)}/senders`;
  return senderId === undefined ? base : `${base}/${encodeURIComponent(senderId)}`;
}

/** `FR,BE` or repeated `--country`: upper-cased ISO codes (the server checks them). */
function countriesOf(values: string[] | undefined): string[] | undefined {
  if (values === undefined) return undefined;
  return values
    .flatMap((v) => v.split(/[\s,]+/))
    .filter(Boolean)
    .map((c) => c.toUpperCase());
}

function said(ctx: Context, what: string, s: any): void {
  line(ctx.io, `Sender ${s.value} (${s.kind}, ${s.senderId}) ${what}: ${s.status}, ${s.countries.length === 0 ? 'every country' : s.countries.join(', ')}.`);
}

/** A sender named by its id or by its value (`SHOP`, `36111`), among the organisation's. */
async function senderId(ctx: Context, organisationId: string, sender: string): Promise<string> {
  if (UUID.test(sender)) return sender;
  const { items } = await ctx.client.get(path(organisationId), admin);
  const found = items.find((s: any) => s.value === sender);
  if (!found) throw new CliError(`no sender "${sender}" in the registry of organisation ${organisationId}`, EXIT.NOT_FOUND);
  return found.senderId;
}

export async function senderList(ctx: Context, organisationId: string, o: { json?: boolean }): Promise<void> {
  const { items } = await ctx.client.get(path(organisationId), admin);
  if (o.json) return json(ctx.io, items);
  table(
    ctx.io,
    ['id', 'sender', 'kind', 'countries', 'status', 'changed'],
    items.map((s: any) => [s.senderId, s.value, s.kind, s.countries.join(' ') || 'every', status(ctx.io, s.status), date(s.updateDate)]),
  );
}

export async function senderAdd(
  ctx: Context,
  organisationId: string,
  value: string,
  o: { country?: string[]; approved?: boolean; json?: boolean },
): Promise<void> {
  const countries = countriesOf(o.country);
  const s = await ctx.client.post(path(organisationId), { value, ...(countries && { countries }), ...(o.approved && { status: 'APPROVED' }) }, admin);
  if (o.json) return json(ctx.io, s);
  said(ctx, 'registered', s);
}

async function decide(ctx: Context, organisationId: string, sender: string, status: 'APPROVED' | 'REJECTED', o: { country?: string[]; json?: boolean }) {
  const countries = countriesOf(o.country);
  const id = await senderId(ctx, organisationId, sender);
  const res = await ctx.client.call('PATCH', path(organisationId, id), { admin: true, body: { status, ...(countries && { countries }) } });
  if (o.json) return json(ctx.io, res.body);
  said(ctx, status === 'APPROVED' ? 'approved' : 'rejected', res.body);
}

export const senderApprove = (ctx: Context, organisationId: string, sender: string, o: { country?: string[]; json?: boolean }) =>
  decide(ctx, organisationId, sender, 'APPROVED', o);

export const senderReject = (ctx: Context, organisationId: string, sender: string, o: { json?: boolean }) => decide(ctx, organisationId, sender, 'REJECTED', o);

export async function senderRemove(ctx: Context, organisationId: string, sender: string, o: { json?: boolean }): Promise<void> {
  const id = await senderId(ctx, organisationId, sender);
  const res = await ctx.client.call('DELETE', path(organisationId, id), { admin: true });
  if (o.json) return json(ctx.io, res.body);
  line(ctx.io, `Sender ${res.body.value} (${res.body.senderId}) removed from the registry.`);
}
