/**
 * Public holidays: France's, fixed and movable (computed from Easter), as `YYYY-MM-DD` days. Other countries' holidays
 * are configured as lists of dates (see sending-window.ts).
 */

/** Easter Sunday of a Gregorian year (the anonymous Gregorian algorithm, "Meeus/Jones/Butcher"), `YYYY-MM-DD`. */
export function easterSunday(year: number): string {
  const a = year % 19;
  const b = Math.floor(year / 100);
  const c = year % 100;
  const d = Math.floor(b / 4);
  const e = b % 4;
  const f = Math.floor((b + 8) / 25);
  const g = Math.floor((b - f + 1) / 3);
  const h = (19 * a + b - d - g + 15) % 30;
  const i = Math.floor(c / 4);
  const k = c % 4;
  const l = (32 + 2 * e + 2 * i - h - k) % 7;
  const m = Math.floor((a + 11 * h + 22 * l) / 451);
  const month = Math.floor((h + l - 7 * m + 114) / 31);
  const day = ((h + l - 7 * m + 114) % 31) + 1;
  return dayText(Date.UTC(year, month - 1, day));
}

function dayText(utcMs: number): string {
  return new Date(utcMs).toISOString().slice(0, 10);
}

function plusDays(day: string, n: number): string {
  return dayText(Date.parse(`${day}T00:00:00Z`) + n * 86_400_000);
}

/**
 * France's eleven public holidays of a year, in date order: New Year's Day, Easter Monday, Labour Day, Victory in
 * Europe Day, Ascension (Easter + 39 days), Whit Monday (Easter + 50), Bastille Day, Assumption, All Saints' Day,
 * Armistice Day and Christmas.
 */
export function frenchPublicHolidays(year: number): string[] {
  const easter = easterSunday(year);
  const y = String(year).padStart(4, '0');
  return [
    `${y}-01-01`,
    plusDays(easter, 1),
    `${y}-05-01`,
    `${y}-05-08`,
    plusDays(easter, 39),
    plusDays(easter, 50),
    `${y}-07-14`,
    `${y}-08-15`,
    `${y}-11-01`,
    `${y}-11-11`,
    `${y}-12-25`,
  ].sort();
}

/** The computed calendars: `FR`, or `NONE` (only the configured dates). */
export const HOLIDAY_CALENDARS = ['FR', 'NONE'] as const;
export type HolidayCalendar = (typeof HOLIDAY_CALENDARS)[number];

const computed = new Map<string, ReadonlySet<string>>();

/** Whether `day` (`YYYY-MM-DD`) is a public holiday of the calendar. */
export function isComputedHoliday(calendar: HolidayCalendar, day: string): boolean {
  if (calendar === 'NONE') return false;
  const year = Number(day.slice(0, 4));
  const key = `${calendar}:${year}`;
  let days = computed.get(key);
  if (!days) {
    days = new Set(frenchPublicHolidays(year));
    computed.set(key, days);
  }
  return days.has(day);
}
