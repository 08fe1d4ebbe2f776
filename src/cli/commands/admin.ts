import { query } from '../client.ts';
import type { Context } from '../context.ts';
import { CliError, EXIT } from '../io.ts';
import { date, euros, json, line, status, table } from '../output.ts';

const admin = { admin: true };

export async function organisations(ctx: Context, o: { page?: string; json?: boolean }): Promise<void> {
  const res = await ctx.client.get(`/admin/v1/organisations${query({ page: o.page, pageSize: 100 })}`, admin);
  if (o.json) return json(ctx.io, res.items);
  table(
    ctx.io,
    ['id', 'name', 'state', 'balance', 'country', 'parent', 'created'],
    res.items.map((x: any) => [
      x.organisationId,
      x.name,
      status(ctx.io, x.state),
      euros(x.balance.amount),
      x.defaultCountry ?? '',
      x.parentOrganisationId ?? '',
      date(x.creationDate),
    ]),
  );
}

export async function organisationCreate(
  ctx: Context,
  name: string,
  o: { country?: string; timeZone?: string; parent?: string; channel?: string; json?: boolean },
): Promise<void> {
  const org = await ctx.client.post(
    '/admin/v1/organisations',
    {
      name,
      ...(o.country && { defaultCountry: o.country.toUpperCase() }),
      ...(o.timeZone && { timeZone: o.timeZone }),
      ...(o.parent && { parentOrganisationId: o.parent }),
    },
    admin,
  );
  let channel: any;
  let key: any;
  if (o.channel) {
    const type = o.channel.toUpperCase();
    if (!['SMS', 'RCS', 'VOICE'].includes(type)) throw new CliError('--channel: sms, rcs or voice', EXIT.USAGE);
    channel = await ctx.client.post(`/admin/v1/organisations/${org.organisationId}/channels`, { name: `${name} ${type}`, type, flow: 'TRANSACTIONAL' }, admin);
    key = await ctx.client.post(`/admin/v1/channels/${channel.channelId}/credentials`, { name: 'First key', roles: ['ADMIN'] }, admin);
  }
  if (o.json) return json(ctx.io, { organisation: org, ...(channel && { channel, credential: key }) });
  line(ctx.io, `Organisation ${org.organisationId} (${org.name}) created.`);
  if (channel) line(ctx.io, `${channel.type} channel ${channel.channelId}, ADMIN key (shown once, keep it): ${key.value}`);
}

export async function channels(ctx: Context, organisationId: string, o: { json?: boolean }): Promise<void> {
  const res = await ctx.client.get(`/admin/v1/organisations/${encodeURIComponent(organisationId)}/channels`, admin);
  if (o.json) return json(ctx.io, res.items);
  table(
    ctx.io,
    ['id', 'name', 'type', 'flow', 'state', 'sender'],
    res.items.map((c: any) => [c.channelId, c.name, c.type, c.flow, status(ctx.io, c.state), c.defaultFromField ?? '']),
  );
}

export async function adminKeyCreate(ctx: Context, channelId: string, o: { name?: string; role?: string[]; json?: boolean }): Promise<void> {
  const roles = (o.role ?? ['ADMIN']).map((r) => r.toUpperCase());
  const c = await ctx.client.post(`/admin/v1/channels/${encodeURIComponent(channelId)}/credentials`, { name: o.name ?? 'Key from the CLI', roles }, admin);
  if (o.json) return json(ctx.io, c);
  line(ctx.io, `Key ${c.credentialId} (${c.roles.join(',')}) on ${c.channel.type} channel ${c.channel.name}; shown once, keep it:`);
  line(ctx.io, c.value);
}

export async function credit(ctx: Context, organisationId: string, amount: string, o: { reference?: string; json?: boolean }): Promise<void> {
  const e = await ctx.client.post(
    `/admin/v1/organisations/${encodeURIComponent(organisationId)}/credit`,
    { amount, ...(o.reference && { reference: o.reference }) },
    admin,
  );
  if (o.json) return json(ctx.io, e);
  line(ctx.io, `Credited ${euros(e.amount)}: the balance is ${euros(e.balance)}.`);
}

export async function prices(ctx: Context, o: { json?: boolean }): Promise<void> {
  const res = await ctx.client.get('/admin/v1/prices', admin);
  if (o.json) return json(ctx.io, res.items);
  table(
    ctx.io,
    ['type', 'country', 'kind', 'price a unit'],
    res.items.map((p: any) => [p.channelType, p.country, p.kind, euros(p.amount)]),
  );
}

export async function priceSet(ctx: Context, type: string, country: string, amount: string, o: { kind?: string; json?: boolean }): Promise<void> {
  const res = await ctx.client.call('PUT', '/admin/v1/prices', {
    admin: true,
    body: {
      items: [
        { channelType: type.toUpperCase(), country: country === '*' ? '*' : country.toUpperCase(), ...(o.kind && { kind: o.kind.toUpperCase() }), amount },
      ],
    },
  });
  if (o.json) return json(ctx.io, res.body.items);
  line(ctx.io, `${type.toUpperCase()} ${country}${o.kind ? ` ${o.kind.toUpperCase()}` : ''}: ${euros(Number(amount))} a unit.`);
}

export async function connectors(ctx: Context, o: { json?: boolean }): Promise<void> {
  const res = await ctx.client.get('/admin/v1/connectors', admin);
  if (o.json) return json(ctx.io, res.items);
  table(
    ctx.io,
    ['name', 'kind', 'health', 'since', 'submits/s', 'submitted', 'receipts', 'last error'],
    res.items.map((c: any) => [
      c.name,
      c.type,
      status(ctx.io, c.live.state),
      date(c.live.since),
      c.live.submitsPerSecond,
      c.live.submitted,
      c.live.receipts,
      c.live.lastError ?? '',
    ]),
  );
}

export async function routes(ctx: Context, o: { json?: boolean }): Promise<void> {
  const res = await ctx.client.get('/admin/v1/routes', admin);
  if (o.json) return json(ctx.io, res.items);
  table(
    ctx.io,
    ['priority', 'name', 'match', 'connectors', 'failover', 'enabled'],
    res.items.map((r: any) => [
      r.priority,
      r.name,
      JSON.stringify(r.match),
      r.connectors.map((c: any) => `${c.name ?? c.connectorId}×${c.weight}`).join(', '),
      r.failover.map((c: any) => c.name ?? c.connectorId).join(' → '),
      r.enabled ? 'yes' : 'no',
    ]),
  );
}

export async function routeTest(ctx: Context, number: string, o: { type?: string; json?: boolean }): Promise<void> {
  const res = await ctx.client.post('/admin/v1/routes/test', { to: number, ...(o.type && { type: o.type.toUpperCase() }) }, admin);
  if (o.json) return json(ctx.io, res);
  line(ctx.io, JSON.stringify(res, null, 2));
}

/** Erases a number's data in an organisation (POST /admin/v1/organisations/{id}/erasures) and prints the report. */
export async function eraseNumber(ctx: Context, organisationId: string, msisdn: string, o: { dropOptOut?: boolean; json?: boolean }): Promise<void> {
  const r = await ctx.client.post(
    `/admin/v1/organisations/${encodeURIComponent(organisationId)}/erasures`,
    { msisdn, ...(o.dropOptOut && { keepOptOut: false }) },
    admin,
  );
  if (o.json) return json(ctx.io, r);
  line(ctx.io, `${r.msisdn} erased in ${r.organisationId}; kept rows name it ${r.replacedBy}; its opt-out: ${r.optOut}.`);
  table(
    ctx.io,
    ['table', 'rows'],
    Object.entries(r.rows as Record<string, number>).map(([k, n]) => [k, String(n)]),
  );
}

/** Writes what an organisation keeps about a number, as JSON (GET /admin/v1/organisations/{id}/numbers/{msisdn}/export). */
export async function exportNumber(ctx: Context, organisationId: string, msisdn: string): Promise<void> {
  json(ctx.io, await ctx.client.get(`/admin/v1/organisations/${encodeURIComponent(organisationId)}/numbers/${encodeURIComponent(msisdn)}/export`, admin));
}
