/**
 * Dates: parsing what clients send, formatting what Tern answers, UTC days and months, and wall-clock time in a
 * named time zone. Every instant is epoch milliseconds unless a function says otherwise; protocol-specific formats
 * live with their protocol and build on these.
 */

const DAY_MS = 86_400_000;

// ---- ISO 8601 formatting ---------------------------------------------------------------------------------------

/** An instant as ISO 8601 in UTC with milliseconds (`2024-05-01T10:00:00.000Z`), the way Tern writes dates. */
export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** {@link iso}, or null when there is no instant. */
export function isoOrNull(ms: number | null | undefined): string | null {
  return ms == null ? null : iso(ms);
}

// ---- UTC days and months ---------------------------------------------------------------------------------------

/** The UTC day of an instant, `YYYY-MM-DD`. */
export function utcDay(ms: number): string {
  // Asked several times for every message, nearly always of the same day: the last day's text is kept.
  const day = Math.floor(ms / DAY_MS);
  if (day !== lastDay) {
    lastDayText = iso(ms).slice(0, 10);
    lastDay = day;
  }
  return lastDayText;
}
let lastDay = Number.NaN;
let lastDayText = '';

/** The first day of the UTC month of an instant, `YYYY-MM-01`. */
export function utcMonthStart(ms: number): string {
  return `${iso(ms).slice(0, 7)}-01`;
}

// ---- Parsing ---------------------------------------------------------------------------------------------------

const LOCAL_ISO = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?)?$/;
const ISO_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i;

/**
 * Parses an API date: ISO 8601 with an offset, or without one (then read as UTC, the way Tern emits dates).
 * Returns null for anything else.
 */
export function parseApiDate(value: string): Date | null {
  const v = value.trim();
  let d: Date;
  if (ISO_WITH_OFFSET.test(v)) d = new Date(v);
  else if (LOCAL_ISO.test(v)) d = new Date(v.length === 10 ? `${v}T00:00:00Z` : `${v}Z`);
  else return null;
  return Number.isNaN(d.getTime()) ? null : d;
}

const DAY_RE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** A date and time written without an offset: which instant it is depends on the time zone it is read in. */
export interface LocalDateTime {
  readonly local: WallClock;
  /** Milliseconds past `local.second`. */
  readonly ms: number;
}

/** A date a client asked for: an instant (written with an offset), or a local date and time. */
export type RequestedDate = Date | LocalDateTime;

const LOCAL_PARTS = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?$/;

/**
 * Parses an API date that is to be read in the caller's time zone when it has no offset: ISO 8601 with an offset is
 * an instant, `YYYY-MM-DD[THH:mm[:ss[.fff]]]` a local date and time (midnight for a day alone). Null for anything
 * else, and for dates and times that are not real ("2024-02-30", "25:00").
 */
export function parseRequestedDate(value: string): RequestedDate | null {
  const v = value.trim();
  if (ISO_WITH_OFFSET.test(v)) {
    const d = new Date(v);
    return Number.isNaN(d.getTime()) ? null : d;
  }
  const m = LOCAL_PARTS.exec(v);
  if (!m) return null;
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4] ?? '0', m[5] ?? '0', m[6] ?? '0'].map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (parseDay(`${m[1]}-${m[2]}-${m[3]}`) === null || hour > 23 || minute > 59 || second > 59) return null;
  return { local: { year, month, day, hour, minute, second }, ms: Number((m[7] ?? '').padEnd(3, '0').slice(0, 3)) };
}

/** The instant of a requested date, a local one read in `timeZone`. */
export function instantOfRequestedDate(date: RequestedDate, timeZone: string): number {
  return date instanceof Date ? date.getTime() : instantOfWallClock(date.local, timeZone) + date.ms;
}

/** The day when `text` is a real calendar date written `YYYY-MM-DD`, else null ("2024-02-30" is not). */
export function parseDay(text: string): string | null {
  const m = DAY_RE.exec(text);
  if (!m) return null;
  const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  return utcDay(ms) === text ? text : null;
}

const DATE_TIME_RE = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?$/i;

export type DateBound = 'start' | 'end';

/**
 * An inclusive date bound of a list filter (`startDate`, `endDate`) as epoch ms: `YYYY-MM-DD` is a UTC day (its
 * first instant for a start, its last for an end); an ISO 8601 date-time is taken as written, in UTC when it has no
 * offset. Null when it is neither.
 */
export function parseDateBound(text: string, bound: DateBound): number | null {
  const day = DAY_RE.exec(text);
  if (day) {
    const ms = Date.UTC(Number(day[1]), Number(day[2]) - 1, Number(day[3]));
    if (utcDay(ms) !== text) return null;
    return bound === 'start' ? ms : ms + DAY_MS - 1;
  }
  const m = DATE_TIME_RE.exec(text);
  if (!m) return null;
  const [, date, hh, mm, ss = '00', fraction = '', zone = 'Z'] = m;
  if (parseDateBound(date!, 'start') === null || Number(hh) > 23 || Number(mm) > 59 || Number(ss) > 59) return null;
  const offset = zone.toUpperCase() === 'Z' ? 'Z' : zone.length === 5 ? `${zone.slice(0, 3)}:${zone.slice(3)}` : zone;
  const ms = Date.parse(`${date}T${hh}:${mm}:${ss}${fraction.slice(0, 4)}${offset}`);
  return Number.isNaN(ms) ? null : ms;
}

// ---- Wall-clock time in a time zone ----------------------------------------------------------------------------

/** A date and time as a clock in some time zone shows it (month 1–12, hour 0–23). */
export interface WallClock {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-GB', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/** The wall-clock time in `timeZone` (an IANA name, e.g. `Europe/Paris`) at an instant. */
export function wallClockAt(ms: number, timeZone: string): WallClock {
  const parts: Record<string, number> = {};
  for (const p of formatterFor(timeZone).formatToParts(new Date(ms))) {
    if (p.type !== 'literal') parts[p.type] = Number(p.value);
  }
  return {
    year: parts.year!,
    month: parts.month!,
    day: parts.day!,
    hour: parts.hour!,
    minute: parts.minute!,
    second: parts.second!,
  };
}

/** The offset of `timeZone` from UTC at an instant, in ms (positive east of Greenwich). */
function offsetAt(ms: number, timeZone: string): number {
  const p = wallClockAt(ms, timeZone);
  const asUtc = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second);
  return asUtc - Math.floor(ms / 1000) * 1000;
}

/**
 * The instant of a wall-clock time in `timeZone`. A time that does not exist (skipped when clocks go forward) is
 * read with the offset in force just before the change, so it lands just after it; a time that happens twice
 * (clocks go back) is its first occurrence.
 */
export function instantOfWallClock(wall: Omit<WallClock, 'second'> & { second?: number }, timeZone: string): number {
  const asUtc = Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute, wall.second ?? 0);
  const before = offsetAt(asUtc - DAY_MS, timeZone);
  const candidates = [asUtc - before, asUtc - offsetAt(asUtc - before, timeZone)];
  for (const c of candidates.sort((a, b) => a - b)) {
    if (c + offsetAt(c, timeZone) === asUtc) return c;
  }
  return asUtc - before;
}
