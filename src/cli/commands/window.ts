import type { Context } from '../context.ts';
import { CliError, EXIT } from '../io.ts';
import { json, line, table } from '../output.ts';

const admin = { admin: true };
const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];

function path(organisationId: string): string {
  return `/admin/v1/organisations/${encodeURIComponent(organisationId)}/sending-window`;
}

function show(ctx: Context, w: any): void {
  line(ctx.io, `Marketing window of ${w.organisationId}: ${w.enabled ? 'on' : 'off'}${w.own ? '' : ' (the default)'}, ${w.timeZone} time`);
  table(
    ctx.io,
    ['day', 'hours'],
    WEEKDAYS.map((d) => [d, w.hours[d] ? `${w.hours[d].from}–${w.hours[d].to}` : 'closed']),
  );
  line(ctx.io, `Holidays: ${w.holidayCalendar === 'FR' ? "France's" : 'none computed'}${w.holidays.length > 0 ? `, and ${w.holidays.join(', ')}` : ''}`);
  line(ctx.io, `Ramp: ${w.rampPerSecond} a second per channel${w.channelIds.length > 0 ? `; channels opted in: ${w.channelIds.join(', ')}` : ''}`);
}

export async function windowShow(ctx: Context, organisationId: string, o: { json?: boolean }): Promise<void> {
  const w = await ctx.client.get(path(organisationId), admin);
  if (o.json) return json(ctx.io, w);
  show(ctx, w);
}

/** `monday=08:00-20:00`, `sunday=closed`, or `mon-sat=…` style ranges of weekdays. */
function parseDay(spec: string): Record<string, { from: string; to: string } | null> {
  const m = /^([a-z]+)(?:-([a-z]+))?=(?:(\d{2}:\d{2})-(\d{2}:\d{2})|(closed))$/i.exec(spec.trim());
  if (!m) throw new CliError(`--day ${spec}: write day=HH:MM-HH:MM or day=closed (e.g. monday=08:00-20:00, mon-sat=08:00-20:00)`, EXIT.USAGE);
  const index = (name: string) => {
    const i = WEEKDAYS.findIndex((d) => d.startsWith(name.toLowerCase()) && name.length >= 3);
    if (i < 0) throw new CliError(`--day ${spec}: "${name}" is not a weekday`, EXIT.USAGE);
    return i;
  };
  const first = index(m[1]!);
  const last = m[2] ? index(m[2]) : first;
  if (last < first) throw new CliError(`--day ${spec}: ${m[2]} comes before ${m[1]}`, EXIT.USAGE);
  const hours = m[5] ? null : { from: m[3]!, to: m[4]! };
  return Object.fromEntries(WEEKDAYS.slice(first, last + 1).map((d) => [d, hours]));
}

export async function windowSet(
  ctx: Context,
  organisationId: string,
  o: { day?: string[]; calendar?: string; holiday?: string[]; ramp?: string; channel?: string[]; off?: boolean; json?: boolean },
): Promise<void> {
  const hours = Object.assign({}, ...(o.day ?? []).map(parseDay)) as Record<string, unknown>;
  const body = {
    ...(o.off ? { enabled: false } : {}),
    ...(Object.keys(hours).length > 0 && { hours }),
    ...(o.calendar && { holidayCalendar: o.calendar.toUpperCase() }),
    ...(o.holiday && { holidays: o.holiday }),
    ...(o.ramp !== undefined && { rampPerSecond: Number(o.ramp) }),
    ...(o.channel && { channelIds: o.channel }),
  };
  const res = await ctx.client.call('PUT', path(organisationId), { admin: true, body });
  if (o.json) return json(ctx.io, res.body);
  show(ctx, res.body);
}

export async function windowReset(ctx: Context, organisationId: string, o: { json?: boolean }): Promise<void> {
  const res = await ctx.client.call('DELETE', path(organisationId), { admin: true });
  if (o.json) return json(ctx.io, res.body);
  show(ctx, res.body);
}
