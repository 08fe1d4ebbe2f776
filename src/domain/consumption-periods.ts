import { createHash } from 'node:crypto';
import { utcDay } from './dates.ts';

/** Consumption periods: calendar days and months in UTC, written `YYYY-MM-DD`. */
export const PERIOD_TYPES = ['DAY', 'MONTH'] as const;
export type PeriodType = (typeof PERIOD_TYPES)[number];

/** What a consumption record counts: the rollups' channel type (a lookup is billed on the key's channel). */
export const CONSUMPTION_TYPES = ['SMS', 'RCS', 'VOICE', 'LOOKUP'] as const;
export type ConsumptionType = (typeof CONSUMPTION_TYPES)[number];

const DAY_MS = 86_400_000;

function dayMs(day: string): number {
  return Date.parse(`${day}T00:00:00Z`);
}

export function addDays(day: string, n: number): string {
  return utcDay(dayMs(day) + n * DAY_MS);
}

/** The first day of the month `n` months after the month of `day` (n may be negative). */
export function monthStartPlus(day: string, n: number): string {
  const d = new Date(dayMs(day));
  return utcDay(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + n, 1));
}

/** The first day of the period of type `type` that contains `day`. */
export function periodStart(day: string, type: PeriodType): string {
  return type === 'DAY' ? day : `${day.slice(0, 7)}-01`;
}

/** The last day of the period that starts on `start`. */
export function periodEnd(start: string, type: PeriodType): string {
  return type === 'DAY' ? start : addDays(monthStartPlus(start, 1), -1);
}

/**
 * The last settled day: days up to it (UTC) are three days old or more, and what they count changes only through a
 * late change to an old message (a receipt or expiry days after acceptance). Nodes keep their consumption in memory.
 */
export function lastSettledDay(now: number): string {
  return addDays(utcDay(now), -3);
}

/**
 * Whether a write to `day` must tell readers that a settled day changed: one day earlier than readers start keeping
 * days, a margin for nodes' clocks and for a transaction under way at midnight.
 */
export function changesSettledDay(day: string, now: number): boolean {
  return day <= addDays(lastSettledDay(now), 1);
}

/** The default window: the current UTC month and the two before it, up to today. */
export function defaultConsumptionWindow(now: number): { startDate: string; endDate: string } {
  const today = utcDay(now);
  return { startDate: monthStartPlus(today, -2), endDate: today };
}

/**
 * The days a query covers: every period that overlaps [startDate, endDate], whole. A record always counts its
 * whole period, so one consumptionId never stands for two different totals.
 */
export function coveredDays(startDate: string, endDate: string, type: PeriodType): { from: string; to: string } {
  return { from: periodStart(startDate, type), to: periodEnd(periodStart(endDate, type), type) };
}

export interface ConsumptionKey {
  organisationId: string;
  channelId: string;
  type: string;
  periodType: PeriodType;
  startDate: string;
}

/**
 * The record's id: a UUID-shaped (version 8) SHA-256 of what identifies it, so the same organisation, channel,
 * type and period always get the same id, without storing it.
 */
export function consumptionId(key: ConsumptionKey): string {
  const b = createHash('sha256').update([key.organisationId, key.channelId, key.type, key.periodType, key.startDate].join('|')).digest().subarray(0, 16);
  b[6] = 0x80 | (b[6]! & 0x0f);
  b[8] = 0x80 | (b[8]! & 0x3f);
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
