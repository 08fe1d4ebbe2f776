/** Date filters of list endpoints (`startDate`, `endDate`). */

const DAY_RE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME_RE = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?$/i;
const DAY_MS = 86_400_000;

export type DateBound = 'start' | 'end';

/**
 * An inclusive date bound as epoch ms: `YYYY-MM-DD` is a UTC day (its first instant for a start, its last for an
 * end); an ISO 8601 date-time is taken as written, in UTC when it has no offset. Null when it is neither.
 */
export function parseDateBound(text: string, bound: DateBound): number | null {
  const day = DAY_RE.exec(text);
  if (day) {
    const ms = Date.UTC(Number(day[1]), Number(day[2]) - 1, Number(day[3]));
    if (new Date(ms).toISOString().slice(0, 10) !== text) return null;
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
