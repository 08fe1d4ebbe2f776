/**
 * Dates of the legacy HTTP 1.6 interface. They carry no zone: the real API reads and writes them in French local
 * time, so Tern does the same, in Europe/Paris (daylight saving time included).
 */
import { instantOfWallClock, wallClockAt } from '../../core/domain/dates.ts';

const LEGACY_TIME_ZONE = 'Europe/Paris';

const SEND_DATE = /^(\d{2})(\d{2})(\d{4})(?:-(\d{2}):(\d{2}))?$/;

/**
 * `date_envoi`: `ddMMyyyy-HH:mm`, or `ddMMyyyy` (midnight), in French local time. Null when it is not one of these
 * forms or not a real date and time.
 */
export function parseLegacySendDate(value: string): number | null {
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
  return instantOfWallClock({ year, month, day, hour, minute }, LEGACY_TIME_ZONE);
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** `yyyy-MM-dd HH:mm:ss` in French local time: the delivery-report callback's `date_reception`. */
export function formatLegacyReportDate(ms: number): string {
  const p = wallClockAt(ms, LEGACY_TIME_ZONE);
  return `${p.year}-${pad(p.month)}-${pad(p.day)} ${pad(p.hour)}:${pad(p.minute)}:${pad(p.second)}`;
}

/** `ddMMyyyy-HHmmss` in French local time: the reply callback's `date_reception`. */
export function formatLegacyReplyDate(ms: number): string {
  const p = wallClockAt(ms, LEGACY_TIME_ZONE);
  return `${pad(p.day)}${pad(p.month)}${p.year}-${pad(p.hour)}${pad(p.minute)}${pad(p.second)}`;
}
