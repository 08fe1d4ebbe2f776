/**
 * Sending windows: the hours in which an organisation's marketing messages may go (French rule: Monday to Saturday
 * 8:00–20:00, never on Sundays or public holidays). A message accepted outside its window is deferred to the next
 * opening, and the messages deferred to one opening leave on a ramp rather than all at its first second.
 */
import { instantOfWallClock, wallClockAt } from './dates.ts';
import { type HolidayCalendar, isComputedHoliday } from './holidays.ts';

export const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/** Allowed hours of a day, local time, `HH:MM`: from `from` (included) to `to` (excluded; `24:00` for midnight). */
export interface DayHours {
  from: string;
  to: string;
}

export interface SendingWindow {
  /** Whether the window holds messages at all. */
  enabled: boolean;
  /** Each weekday's hours; null: no sending that day. */
  hours: Record<Weekday, DayHours | null>;
  /** The computed public holidays (`FR`: France's, movable ones included), or `NONE`. */
  holidayCalendar: HolidayCalendar;
  /** More days without sending (`YYYY-MM-DD`): another country's holidays, a local one. */
  holidays: string[];
  /** The ramp: messages deferred to one opening leave at this many a second per channel. */
  rampPerSecond: number;
  /** Channels held by the window besides the MARKETING ones (any flow but OTP may opt in). */
  channelIds: string[];
}

export const MAX_RAMP_PER_SECOND = 10_000;
export const MAX_CONFIGURED_HOLIDAYS = 1_000;

const FRENCH_DAY: DayHours = { from: '08:00', to: '20:00' };

/** The French default: Monday to Saturday 8:00–20:00, no Sundays, no public holidays, 10 messages a second. */
export const FRENCH_DEFAULT_WINDOW: SendingWindow = Object.freeze({
  enabled: true,
  hours: {
    monday: FRENCH_DAY,
    tuesday: FRENCH_DAY,
    wednesday: FRENCH_DAY,
    thursday: FRENCH_DAY,
    friday: FRENCH_DAY,
    saturday: FRENCH_DAY,
    sunday: null,
  },
  holidayCalendar: 'FR',
  holidays: [],
  rampPerSecond: 10,
  channelIds: [],
}) as SendingWindow;

const HHMM = /^([01]\d|2[0-3]):([0-5]\d)$|^24:00$/;

/** Minutes past midnight of `HH:MM` (`24:00` is 1440); null when it is not one. */
export function minutesOf(hhmm: string): number | null {
  const m = HHMM.exec(hhmm);
  if (!m) return null;
  return hhmm === '24:00' ? 1440 : Number(m[1]) * 60 + Number(m[2]);
}

/** What is wrong with a window, as [field, reason], or null when it is sound. */
export function windowProblem(w: SendingWindow): [string, string] | null {
  let open = 0;
  for (const day of WEEKDAYS) {
    const h = w.hours[day];
    if (h === null) continue;
    const from = minutesOf(h.from);
    const to = minutesOf(h.to);
    if (from === null || from === 1440) return [`hours.${day}.from`, `"${h.from}" is not a time of day HH:MM (00:00 to 23:59)`];
    if (to === null) return [`hours.${day}.to`, `"${h.to}" is not a time of day HH:MM (00:00 to 24:00)`];
    if (to <= from) return [`hours.${day}.to`, `must be after from (${h.from})`];
    open++;
  }
  if (w.enabled && open === 0) return ['hours', 'at least one weekday must have hours'];
  if (w.holidays.length > MAX_CONFIGURED_HOLIDAYS) return ['holidays', `at most ${MAX_CONFIGURED_HOLIDAYS} dates`];
  for (const [i, d] of w.holidays.entries()) {
    const ms = Date.parse(`${d}T00:00:00Z`);
    if (!/^\d{4}-\d{2}-\d{2}$/.test(d) || Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== d) {
      return [`holidays[${i}]`, `"${d}" is not a date YYYY-MM-DD`];
    }
  }
  if (!Number.isInteger(w.rampPerSecond) || w.rampPerSecond < 1 || w.rampPerSecond > MAX_RAMP_PER_SECOND) {
    return ['rampPerSecond', `must be a whole number from 1 to ${MAX_RAMP_PER_SECOND}`];
  }
  return null;
}

/** How far ahead an opening is looked for: past it, a window (all days holidays) is taken as never opening. */
const SEARCH_DAYS = 800;

/**
 * The first instant at or after `at` when the window is open in `timeZone`: `at` itself when it is open then, else
 * the next opening; null when none comes within two years (every day a holiday).
 */
export function nextOpening(w: SendingWindow, timeZone: string, at: number): number | null {
  const wall = wallClockAt(at, timeZone);
  const start = Date.UTC(wall.year, wall.month - 1, wall.day);
  const extra = new Set(w.holidays);
  for (let d = 0; d < SEARCH_DAYS; d++) {
    const open = openHoursOf(w, extra, timeZone, start + d * 86_400_000);
    if (open === null || at >= open.closes) continue;
    return Math.max(at, open.opens);
  }
  return null;
}

/**
 * When the open hours that `at` falls in close (their `to` that day): the end of the time a ramp that starts at an
 * opening may use. Null when the window is not open at `at`.
 */
export function closingAfter(w: SendingWindow, timeZone: string, at: number): number | null {
  const wall = wallClockAt(at, timeZone);
  const open = openHoursOf(w, new Set(w.holidays), timeZone, Date.UTC(wall.year, wall.month - 1, wall.day));
  return open !== null && open.opens <= at && at < open.closes ? open.closes : null;
}

/** The open hours of one local day (given as its UTC midnight) as instants; null for a day without sending. */
function openHoursOf(w: SendingWindow, extra: ReadonlySet<string>, timeZone: string, dayStart: number): { opens: number; closes: number } | null {
  const date = new Date(dayStart);
  const day = date.toISOString().slice(0, 10);
  const hours = w.hours[WEEKDAYS[(date.getUTCDay() + 6) % 7]!];
  if (hours === null || hours === undefined || extra.has(day) || isComputedHoliday(w.holidayCalendar, day)) return null;
  const local = { year: date.getUTCFullYear(), month: date.getUTCMonth() + 1, day: date.getUTCDate() };
  const from = minutesOf(hours.from)!;
  const to = minutesOf(hours.to)!;
  const opens = instantOfWallClock({ ...local, hour: Math.floor(from / 60), minute: from % 60 }, timeZone);
  const closes = to === 1440 ? nextMidnight(local, timeZone) : instantOfWallClock({ ...local, hour: Math.floor(to / 60), minute: to % 60 }, timeZone);
  return { opens, closes };
}

function nextMidnight(local: { year: number; month: number; day: number }, timeZone: string): number {
  const next = new Date(Date.UTC(local.year, local.month - 1, local.day) + 86_400_000);
  return instantOfWallClock({ year: next.getUTCFullYear(), month: next.getUTCMonth() + 1, day: next.getUTCDate(), hour: 0, minute: 0 }, timeZone);
}

/**
 * The ramp: the k-th message (from 0, in order of acceptance) deferred to one opening on one channel leaves at
 * `opening + k / rampPerSecond` seconds, so the channel's deferred messages flow out at its rate instead of all at once.
 */
export function rampSendAt(opening: number, slot: number, rampPerSecond: number): number {
  return opening + Math.floor((slot * 1000) / rampPerSecond);
}

/**
 * How many places a ramp from `opening` has before `closing`: place k leaves at `rampSendAt(opening, k, rate)`, which
 * is before the closing exactly when k < (closing - opening) × rate / 1000.
 */
export function rampCapacity(opening: number, closing: number, rampPerSecond: number): number {
  return Math.max(0, Math.ceil(((closing - opening) * rampPerSecond) / 1000));
}
