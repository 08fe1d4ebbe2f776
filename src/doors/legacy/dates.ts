/**
 * Dates of the legacy HTTP 1.6 interface. They carry no zone: the real API reads and writes them in French local
 * time, so Tern does the same, in Europe/Paris (daylight saving time included) through Intl.
 */

export const LEGACY_TIME_ZONE = 'Europe/Paris';

interface LocalParts {
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

/** The wall-clock time in `timeZone` at an instant. */
export function localParts(ms: number, timeZone = LEGACY_TIME_ZONE): LocalParts {
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

function offsetAt(ms: number, timeZone: string): number {
  const p = localParts(ms, timeZone);
  const asUtc = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second);
  return asUtc - Math.floor(ms / 1000) * 1000;
}

/**
 * The instant of a wall-clock time in `timeZone`. A time that does not exist (skipped when clocks go forward) is
 * read with the offset in force just before the change, so it lands just after it; a time that happens twice
 * (clocks go back) is its first occurrence.
 */
export function instantOfLocal(p: Omit<LocalParts, 'second'> & { second?: number }, timeZone = LEGACY_TIME_ZONE): number {
  const asUtc = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second ?? 0);
  const before = offsetAt(asUtc - 86_400_000, timeZone);
  const candidates = [asUtc - before, asUtc - offsetAt(asUtc - before, timeZone)];
  for (const c of candidates.sort((a, b) => a - b)) {
    if (c + offsetAt(c, timeZone) === asUtc) return c;
  }
  return asUtc - before;
}

const SEND_DATE = /^(\d{2})(\d{2})(\d{4})(?:-(\d{2}):(\d{2}))?$/;

/**
 * `date_envoi`: `ddMMyyyy-HH:mm`, or `ddMMyyyy` (midnight), in French local time. Null when it is not one of these
 * forms or not a real date and time.
 */
export function parseLegacySendDate(value: string, timeZone = LEGACY_TIME_ZONE): number | null {
  const m = SEND_DATE.exec(value.trim());
  if (!m) return null;
  const [day, month, year, hour, minute] = [m[1], m[2], m[3], m[4] ?? '00', m[5] ?? '00'].map(Number) as [
    number,
    number,
    number,
    number,
    number,
  ];
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59) return null;
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (day > daysInMonth) return null;
  return instantOfLocal({ year, month, day, hour, minute }, timeZone);
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** `yyyy-MM-dd HH:mm:ss` in French local time: the delivery-report callback's `date_reception`. */
export function formatLegacyReportDate(ms: number, timeZone = LEGACY_TIME_ZONE): string {
  const p = localParts(ms, timeZone);
  return `${p.year}-${pad(p.month)}-${pad(p.day)} ${pad(p.hour)}:${pad(p.minute)}:${pad(p.second)}`;
}

/** `ddMMyyyy-HHmmss` in French local time: the reply callback's `date_reception`. */
export function formatLegacyReplyDate(ms: number, timeZone = LEGACY_TIME_ZONE): string {
  const p = localParts(ms, timeZone);
  return `${pad(p.day)}${pad(p.month)}${p.year}-${pad(p.hour)}${pad(p.minute)}${pad(p.second)}`;
}
