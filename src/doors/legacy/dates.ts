/**
 * Dates of the legacy HTTP 1.6 interface. They carry no zone: the real API reads and writes them in French local
 * time; Tern reads and writes them in the organisation's time zone, Europe/Paris unless it says otherwise (daylight
 * saving time included).
 */
import { instantOfWallClock, wallClockAt } from '../../domain/dates.ts';

export const LEGACY_TIME_ZONE = 'Europe/Paris';

const SEND_DATE = /^(\d{2})(\d{2})(\d{4})(?:-(\d{2}):(\d{2}))?$/;

/**
 * `date_envoi`: `ddMMyyyy-HH:mm`, or `ddMMyyyy` (midnight), in local time of `timeZone`. Null when it is not one of
 * these forms or not a real date and time.
 */
export function parseLegacySendDate(value: string, timeZone = LEGACY_TIME_ZONE): number | null {
  const m = SEND_DATE.exec(value.trim());
  if (!m) return null;
  const [day, month, year, hour, minute] = [m[1], m[2], m[3], m[4] ?? '00', m[5] ?? '00'].map(Number) as [number, number, number, number, number];
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59) return null;
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (day > daysInMonth) return null;
  return instantOfWallClock({ year, month, day, hour, minute }, timeZone);
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** `yyyy-MM-dd HH:mm:ss` in local time of `timeZone`: the delivery-report callback's `date_reception`. */
export function formatLegacyReportDate(ms: number, timeZone = LEGACY_TIME_ZONE): string {
  const p = wallClockAt(ms, timeZone);
  return `${p.year}-${pad(p.month)}-${pad(p.day)} ${pad(p.hour)}:${pad(p.minute)}:${pad(p.second)}`;
}

/** `ddMMyyyy-HHmmss` in local time of `timeZone`: the reply callback's `date_reception`. */
export function formatLegacyReplyDate(ms: number, timeZone = LEGACY_TIME_ZONE): string {
  const p = wallClockAt(ms, timeZone);
  return `${pad(p.day)}${pad(p.month)}${p.year}-${pad(p.hour)}${pad(p.minute)}${pad(p.second)}`;
}

/** `dd/MM/yyyy HH:mm` in local time of `timeZone`: a send's date in smsList.do. */
export function formatLegacyListDate(ms: number, timeZone: string): string {
  const p = wallClockAt(ms, timeZone);
  return `${pad(p.day)}/${pad(p.month)}/${p.year} ${pad(p.hour)}:${pad(p.minute)}`;
}

/** `ddMMyyyy-HH:mm` in local time of `timeZone`: a reply's date in responseList.do. */
export function formatLegacyMinute(ms: number, timeZone: string): string {
  const p = wallClockAt(ms, timeZone);
  return `${pad(p.day)}${pad(p.month)}${p.year}-${pad(p.hour)}:${pad(p.minute)}`;
}

/** `ddMMyyyy` in local time of `timeZone`: createAuthorisation.do's `creationDate`. */
export function formatLegacyDay(ms: number, timeZone: string): string {
  const p = wallClockAt(ms, timeZone);
  return `${pad(p.day)}${pad(p.month)}${p.year}`;
}

/** A date of birth written `ddMMyyyy`, as `YYYY-MM-DD`; null when it is not a real calendar day (from 1850 on). */
export function parseLegacyDay(value: string): string | null {
  const m = /^(\d{2})(\d{2})(\d{4})$/.exec(value.trim());
  if (!m) return null;
  const [day, month, year] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (month < 1 || month > 12 || day < 1 || year < 1850 || day > new Date(Date.UTC(year, month, 0)).getUTCDate()) return null;
  return `${m[3]}-${m[2]}-${m[1]}`;
}
