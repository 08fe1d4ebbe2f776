import { query } from '../client.ts';
import type { Context } from '../context.ts';
import { CliError, EXIT } from '../io.ts';
import { date, json, line, status, table } from '../output.ts';

async function channelOf(ctx: Context, option: string | undefined): Promise<string> {
  if (option) return option;
  return (await ctx.client.get('/commons/v1/channels')).items[0].channelId;
}

const ROLES = ['OWNER', 'ADMIN', 'MANAGER', 'USER', 'MESSAGE', 'DEVELOPER', 'SENDER', 'BILLING', 'VIEWER'];

export async function keysList(ctx: Context, o: { channel?: string; json?: boolean }): Promise<void> {
  const channelId = await channelOf(ctx, o.channel);
  const res = await ctx.client.get(`/commons/v1/channels/${channelId}/credentials`);
  if (o.json) return json(ctx.io, res.items);
  table(
    ctx.io,
    ['id', 'name', 'key', 'roles', 'state', 'created'],
    res.items.map((c: any) => [c.credentialId, c.name, `${c.keyPrefix}…`, c.roles.join(','), status(ctx.io, c.state), date(c.creationDate)]),
  );
}

export async function keysCreate(ctx: Context, name: string, o: { channel?: string; role?: string[]; json?: boolean }): Promise<void> {
  const roles = (o.role ?? ['USER']).map((r) => r.toUpperCase());
  const bad = roles.find((r) => !ROLES.includes(r));
  if (bad) throw new CliError(`--role: one of ${ROLES.join(', ')}, not "${bad}"`, EXIT.USAGE);
  const channelId = await channelOf(ctx, o.channel);
  const c = await ctx.client.post(`/commons/v1/channels/${channelId}/credentials`, { name, roles });
  if (o.json) return json(ctx.io, c);
  line(ctx.io, `Key ${c.credentialId} (${c.roles.join(',')}) on channel ${c.channel.name}; shown once, keep it:`);
  line(ctx.io, c.value);
}

export async function keysRevoke(ctx: Context, id: string, o: { channel?: string; json?: boolean }): Promise<void> {
  const channelId = await channelOf(ctx, o.channel);
  const c = await ctx.client.call('DELETE', `/commons/v1/channels/${channelId}/credentials/${encodeURIComponent(id)}`);
  if (o.json) return json(ctx.io, c.body);
  line(ctx.io, `Key ${c.body.credentialId} (${c.body.name}) revoked.`);
}

export async function deliveries(ctx: Context, o: { status?: string; message?: string; limit?: string; json?: boolean }): Promise<void> {
  const limit = o.limit === undefined ? 20 : Number(o.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new CliError('--limit: a whole number from 1 to 100', EXIT.USAGE);
  const res = await ctx.client.get(
    `/commons/v1/webhooks/deliveries${query({ 'searchBy[status]': o.status?.toUpperCase(), 'searchBy[messageId]': o.message, pageSize: limit })}`,
  );
  if (o.json) return json(ctx.io, res.items);
  if (res.items.length === 0) return line(ctx.io, 'No webhook deliveries.');
  table(
    ctx.io,
    ['id', 'created', 'state', 'attempts', 'last answer', 'url', 'message'],
    res.items.map((d: any) => [
      d.deliveryId,
      date(d.creationDate),
      status(ctx.io, d.status),
      d.attemptCount,
      d.lastHttpStatus ?? d.lastError ?? '',
      d.url,
      d.messageId,
    ]),
  );
}

export async function replay(ctx: Context, id: string, o: { json?: boolean }): Promise<void> {
  const d = await ctx.client.post(`/commons/v1/webhooks/deliveries/${encodeURIComponent(id)}/replay`);
  if (o.json) return json(ctx.io, d);
  line(ctx.io, `Delivery ${d.deliveryId} to ${d.url} is sent again now (${d.status}).`);
}

export async function smppList(ctx: Context, o: { channel?: string; json?: boolean }): Promise<void> {
  const channelId = await channelOf(ctx, o.channel);
  const res = await ctx.client.get(`/commons/v1/channels/${channelId}/smpp-credentials`);
  if (o.json) return json(ctx.io, res.items);
  if (res.items.length === 0) return line(ctx.io, 'No SMPP credential.');
  table(
    ctx.io,
    ['id', 'system_id', 'state', 'binds', 'tps', 'window', 'allowed addresses', 'created'],
    res.items.map((c: any) => [
      c.smppCredentialId,
      c.systemId,
      status(ctx.io, c.state),
      c.maxBinds,
      c.tps || 'no limit',
      c.window || "server's",
      c.allowedIps.join(', ') || 'any',
      date(c.creationDate),
    ]),
  );
}

export async function smppCreate(
  ctx: Context,
  systemId: string,
  o: { channel?: string; password?: string; allowedIp?: string[]; maxBinds?: string; tps?: string; window?: string; json?: boolean },
): Promise<void> {
  if (!o.password) throw new CliError('--password: required (at most 8 characters, the SMPP limit)', EXIT.USAGE);
  const num = (v: string | undefined, name: string) => {
    if (v === undefined) return undefined;
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0) throw new CliError(`${name}: a whole number`, EXIT.USAGE);
    return n;
  };
  const channelId = await channelOf(ctx, o.channel);
  const maxBinds = num(o.maxBinds, '--max-binds');
  const tps = num(o.tps, '--tps');
  const window = num(o.window, '--window');
  const c = await ctx.client.post(`/commons/v1/channels/${channelId}/smpp-credentials`, {
    systemId,
    password: o.password,
    ...(o.allowedIp && { allowedIps: o.allowedIp }),
    ...(maxBinds !== undefined && { maxBinds }),
    ...(tps !== undefined && { tps }),
    ...(window !== undefined && { window }),
  });
  if (o.json) return json(ctx.io, c);
  line(
    ctx.io,
    `SMPP credential ${c.smppCredentialId}: system_id ${c.systemId}, ${c.maxBinds} binds${c.tps ? `, ${c.tps} submits/s` : ''}${c.window ? `, window ${c.window}` : ''}.`,
  );
}

export async function smppDelete(ctx: Context, id: string, o: { channel?: string; json?: boolean }): Promise<void> {
  const channelId = await channelOf(ctx, o.channel);
  const c = await ctx.client.call('DELETE', `/commons/v1/channels/${channelId}/smpp-credentials/${encodeURIComponent(id)}`);
  if (o.json) return json(ctx.io, c.body);
  line(ctx.io, `SMPP credential ${c.body.systemId} deleted.`);
}

export async function smppSessions(ctx: Context, o: { channel?: string; json?: boolean }): Promise<void> {
  const channelId = await channelOf(ctx, o.channel);
  const res = await ctx.client.get(`/commons/v1/channels/${channelId}/smpp-sessions`);
  if (o.json) return json(ctx.io, res.items);
  if (res.items.length === 0) return line(ctx.io, 'No SMPP session bound (on the node that answered).');
  table(
    ctx.io,
    ['system_id', 'bind', 'from', 'tls', 'since'],
    res.items.map((s: any) => [s.systemId, s.bindMode, s.remoteAddress, s.tls ? 'yes' : 'no', date(s.bindDate)]),
  );
}
