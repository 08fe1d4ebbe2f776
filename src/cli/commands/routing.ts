/**
 * `tern admin connectors create/set/remove` and `tern admin routes create/set/remove`: the operator's connections and
 * routes, on /admin/v1/connectors and /admin/v1/routes. A connector or route is named by its id or its name.
 */
import type { Context } from '../context.ts';
import { CliError, EXIT } from '../io.ts';
import { json, line } from '../output.ts';

const admin = { admin: true };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * `key=value` settings as JSON fields: a value that reads as JSON (a number, true, false, null, an array, an object,
 * a quoted string) is that value, any other is the text itself (`host=smsc.example.net`).
 */
export function settingsOf(pairs: readonly string[] = [], option = '--set'): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new CliError(`${option} ${pair}: write key=value`, EXIT.USAGE);
    const key = pair.slice(0, eq).trim();
    const raw = pair.slice(eq + 1);
    let value: unknown = raw;
    try {
      value = JSON.parse(raw);
    } catch {
      // text as it is
    }
    out[key] = value;
  }
  return out;
}

/** The id of the connector or route `ref` names: itself when it is an id, else the one of that name. */
async function idOf(ctx: Context, what: 'connectors' | 'routes', ref: string): Promise<string> {
  if (UUID.test(ref)) return ref;
  const res = await ctx.client.get(`/admin/v1/${what}`, admin);
  const found = (res.items as Array<{ name: string; connectorId?: string; routeId?: string }>).find((x) => x.name === ref);
  if (!found) throw new CliError(`no ${what === 'connectors' ? 'connector' : 'route'} named ${ref}`, EXIT.NOT_FOUND);
  return (found.connectorId ?? found.routeId)!;
}

function enabledOf(o: { enable?: boolean; disable?: boolean }): { enabled?: boolean } {
  if (o.enable && o.disable) throw new CliError('--enable or --disable, not both', EXIT.USAGE);
  return o.enable ? { enabled: true } : o.disable ? { enabled: false } : {};
}

export interface ConnectorOptions {
  set?: string[];
  unset?: string[];
  enable?: boolean;
  disable?: boolean;
  json?: boolean;
}

export async function connectorCreate(ctx: Context, name: string, type: string, o: ConnectorOptions): Promise<void> {
  const body = { ...settingsOf(o.set), name, type: type.toUpperCase(), ...enabledOf(o) };
  const c = await ctx.client.post('/admin/v1/connectors', body, admin);
  if (o.json) return json(ctx.io, c);
  line(ctx.io, `Connector ${c.name} (${c.type}, ${c.connectorId}) created${c.enabled ? '' : ', disabled'}.`);
}

export async function connectorSet(ctx: Context, ref: string, o: ConnectorOptions): Promise<void> {
  const body: Record<string, unknown> = { ...settingsOf(o.set), ...enabledOf(o) };
  for (const key of o.unset ?? []) body[key] = null;
  if (Object.keys(body).length === 0) throw new CliError('nothing to change: --set key=value, --unset key, --enable or --disable', EXIT.USAGE);
  const c = await ctx.client.call('PATCH', `/admin/v1/connectors/${await idOf(ctx, 'connectors', ref)}`, { ...admin, body });
  if (o.json) return json(ctx.io, c.body);
  line(ctx.io, `Connector ${c.body.name} changed${c.body.enabled ? '' : ' (disabled)'}; it restarts with its new settings.`);
}

export async function connectorRemove(ctx: Context, ref: string, o: { json?: boolean }): Promise<void> {
  const c = await ctx.client.call('DELETE', `/admin/v1/connectors/${await idOf(ctx, 'connectors', ref)}`, admin);
  if (o.json) return json(ctx.io, c.body);
  line(ctx.io, `Connector ${c.body.name} removed.`);
}

export interface RouteOptions {
  connector?: string[];
  failover?: string[];
  priority?: string;
  prefix?: string;
  country?: string;
  mccMnc?: string;
  type?: string;
  flow?: string;
  organisation?: string;
  channel?: string;
  costPerPart?: string;
  lookupBeforeSend?: boolean;
  enable?: boolean;
  disable?: boolean;
  json?: boolean;
}

/** `name` or `name=weight`, as the API's `{connector, weight}`. */
function connectorRef(spec: string): { connector: string; weight?: number } {
  const [name, weight] = spec.split('=');
  if (!name) throw new CliError(`--connector ${spec}: write name or name=weight`, EXIT.USAGE);
  if (weight === undefined) return { connector: name };
  if (!/^\d{1,9}$/.test(weight)) throw new CliError(`--connector ${spec}: the weight is a whole number`, EXIT.USAGE);
  return { connector: name, weight: Number(weight) };
}

function number(value: string | undefined, option: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n)) throw new CliError(`${option}: a number`, EXIT.USAGE);
  return n;
}

/** The route fields the options give; `match` only when one of its options is given (it replaces the match). */
function routeBody(o: RouteOptions): Record<string, unknown> {
  const match = Object.fromEntries(
    Object.entries({
      prefix: o.prefix,
      country: o.country?.toUpperCase(),
      mccMnc: o.mccMnc,
      type: o.type?.toUpperCase(),
      flow: o.flow?.toUpperCase(),
      organisationId: o.organisation,
      channelId: o.channel,
    }).filter(([, v]) => v !== undefined),
  );
  const priority = number(o.priority, '--priority');
  const costPerPart = number(o.costPerPart, '--cost-per-part');
  return {
    ...(Object.keys(match).length > 0 && { match }),
    ...(o.connector && { connectors: o.connector.map(connectorRef) }),
    ...(o.failover && { failover: o.failover }),
    ...(priority !== undefined && { priority }),
    ...(costPerPart !== undefined && { costPerPart }),
    ...(o.lookupBeforeSend !== undefined && { lookupBeforeSend: o.lookupBeforeSend }),
    ...enabledOf(o),
  };
}

export async function routeCreate(ctx: Context, name: string, o: RouteOptions): Promise<void> {
  if (!o.connector?.length) throw new CliError('--connector: at least one (name or name=weight)', EXIT.USAGE);
  const r = await ctx.client.post('/admin/v1/routes', { name, ...routeBody(o) }, admin);
  if (o.json) return json(ctx.io, r);
  line(ctx.io, `Route ${r.name} (${r.routeId}) created, priority ${r.priority}.`);
}

export async function routeSet(ctx: Context, ref: string, o: RouteOptions & { name?: string }): Promise<void> {
  const body = { ...(o.name && { name: o.name }), ...routeBody(o) };
  if (Object.keys(body).length === 0) throw new CliError('nothing to change: give the options to change', EXIT.USAGE);
  const r = await ctx.client.call('PATCH', `/admin/v1/routes/${await idOf(ctx, 'routes', ref)}`, { ...admin, body });
  if (o.json) return json(ctx.io, r.body);
  line(ctx.io, `Route ${r.body.name} changed.`);
}

export async function routeRemove(ctx: Context, ref: string, o: { json?: boolean }): Promise<void> {
  const r = await ctx.client.call('DELETE', `/admin/v1/routes/${await idOf(ctx, 'routes', ref)}`, admin);
  if (o.json) return json(ctx.io, r.body);
  line(ctx.io, `Route ${r.body.name} removed.`);
}
