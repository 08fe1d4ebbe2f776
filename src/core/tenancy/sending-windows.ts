/**
 * Organisations' sending windows: their own, or their country's default (France's for a French organisation, none
 * elsewhere), cached on every node until a change of settings or organisations is signalled.
 */
import { HOLIDAY_CALENDARS, type HolidayCalendar } from '../../domain/holidays.ts';
import { FRENCH_DEFAULT_WINDOW, nextOpening, type SendingWindow, WEEKDAYS, windowProblem } from '../../domain/sending-window.ts';
import type { Channel } from '../../store/channels.ts';
import { inTransaction, type Store } from '../../store/db.ts';
import { deleteRampsBefore, deleteSendingWindow, findSendingWindow, saveSendingWindow, type SendingWindowRow } from '../../store/sending-windows.ts';
import { Cache } from '../cache.ts';
import { fail } from '../errors.ts';
import type { TenancyService } from './service.ts';

const WINDOW_CACHE_TTL_MS = 60_000;
/** Ramps are kept a week past their opening: long enough for any ramp to have run out. */
const RAMP_KEPT_MS = 7 * 86_400_000;

export interface EffectiveWindow {
  window: SendingWindow;
  /** Whether the organisation set it (else it is its country's default). */
  own: boolean;
  timeZone: string;
}

/** The same window with every part optional: what a change gives. */
export type SendingWindowInput = Partial<SendingWindow>;

function toWindow(r: SendingWindowRow): SendingWindow {
  return {
    enabled: r.enabled === 1,
    hours: JSON.parse(r.hours) as SendingWindow['hours'],
    holidayCalendar: r.holiday_calendar as HolidayCalendar,
    holidays: JSON.parse(r.holidays) as string[],
    rampPerSecond: Number(r.ramp_per_second),
    channelIds: JSON.parse(r.channel_ids) as string[],
  };
}

export class SendingWindows {
  private readonly windows = new Cache<string, EffectiveWindow>({ capacity: 100_000, ttlMs: WINDOW_CACHE_TTL_MS });

  constructor(
    private readonly store: Store,
    private readonly tenancy: TenancyService,
  ) {
    store.signals.on('settings', () => this.windows.clear());
    store.signals.on('organisations', () => this.windows.clear());
  }

  /** An organisation's window: its own, else France's for a French organisation, else France's hours switched off. */
  effective(organisationId: string, now = Date.now()): Promise<EffectiveWindow> {
    return this.windows.load(
      organisationId,
      async () => {
        const locale = await this.tenancy.locale(organisationId, now);
        const row = await findSendingWindow(this.store.db, organisationId);
        if (row) return { window: toWindow(row), own: true, timeZone: locale.timeZone };
        const window = locale.defaultCountry === 'FR' ? FRENCH_DEFAULT_WINDOW : { ...FRENCH_DEFAULT_WINDOW, enabled: false };
        return { window, own: false, timeZone: locale.timeZone };
      },
      now,
    );
  }

  /**
   * The window that holds a channel's messages, or null: MARKETING channels and those that opted in, never an OTP
   * channel.
   */
  async forChannel(channel: Channel, now = Date.now()): Promise<{ window: SendingWindow; timeZone: string } | null> {
    if (channel.flow === 'OTP') return null;
    const e = await this.effective(channel.organisationId, now);
    if (!e.window.enabled) return null;
    if (channel.flow !== 'MARKETING' && !e.window.channelIds.includes(channel.id)) return null;
    return { window: e.window, timeZone: e.timeZone };
  }

  /**
   * Whether a channel's messages may be held, answered at once from what this node knows: false when they surely are
   * not (an OTP channel, a window switched off, a channel that did not opt in), true when they may be.
   */
  mayHold(channel: Channel, now = Date.now()): boolean {
    if (channel.flow === 'OTP') return false;
    const e = this.windows.get(channel.organisationId, now);
    if (!e) return true;
    return e.window.enabled && (channel.flow === 'MARKETING' || e.window.channelIds.includes(channel.id));
  }

  /** When a message of the channel meant for `at` may go: `at`, or its window's next opening. */
  async openingFor(channel: Channel, at: number, now = Date.now()): Promise<number> {
    const held = await this.forChannel(channel, now);
    return held ? (nextOpening(held.window, held.timeZone, at) ?? at) : at;
  }

  /** Sets an organisation's window: the parts given replace those of its current one; every node applies it at once. */
  async set(organisationId: string, input: SendingWindowInput, now = Date.now()): Promise<EffectiveWindow> {
    const current = (await this.effective(organisationId, now)).window;
    const window: SendingWindow = {
      enabled: input.enabled ?? true,
      hours: { ...current.hours, ...input.hours },
      holidayCalendar: input.holidayCalendar ?? current.holidayCalendar,
      holidays: [...new Set(input.holidays ?? current.holidays)].sort(),
      rampPerSecond: input.rampPerSecond ?? current.rampPerSecond,
      channelIds: [...new Set(input.channelIds ?? current.channelIds)],
    };
    for (const day of Object.keys(input.hours ?? {})) {
      if (!(WEEKDAYS as readonly string[]).includes(day)) fail('INVALID_REQUEST', `"${day}" is not a weekday (${WEEKDAYS.join(', ')})`, `hours.${day}`);
    }
    if (!HOLIDAY_CALENDARS.includes(window.holidayCalendar)) fail('INVALID_REQUEST', `must be one of ${HOLIDAY_CALENDARS.join(', ')}`, 'holidayCalendar');
    const problem = windowProblem(window);
    if (problem) fail('INVALID_REQUEST', problem[1], problem[0]);
    const channels = new Map((await this.tenancy.listChannels([organisationId])).map((c) => [c.id, c]));
    for (const [i, id] of window.channelIds.entries()) {
      const c = channels.get(id);
      if (!c) fail('INVALID_REQUEST', `channel ${id} is not one of the organisation's`, `channelIds[${i}]`);
      if (c.flow === 'OTP') fail('INVALID_REQUEST', `channel ${id} is an OTP channel: one-time passwords are never held`, `channelIds[${i}]`);
    }
    await inTransaction(this.store, async (trx) => {
      await saveSendingWindow(trx, {
        organisation_id: organisationId,
        enabled: window.enabled ? 1 : 0,
        hours: JSON.stringify(window.hours),
        holiday_calendar: window.holidayCalendar,
        holidays: JSON.stringify(window.holidays),
        ramp_per_second: window.rampPerSecond,
        channel_ids: JSON.stringify(window.channelIds),
        updated_at: now,
      });
      await this.store.signals.raise(trx, 'settings');
    });
    this.windows.delete(organisationId);
    return this.effective(organisationId, now);
  }

  /** Drops an organisation's own window: its country's default applies again. */
  async reset(organisationId: string, now = Date.now()): Promise<EffectiveWindow> {
    await inTransaction(this.store, async (trx) => {
      await deleteSendingWindow(trx, organisationId);
      await this.store.signals.raise(trx, 'settings');
    });
    this.windows.delete(organisationId);
    return this.effective(organisationId, now);
  }

  /** Ramps long past are forgotten (a pruning task). */
  prune(now: number): Promise<number> {
    return deleteRampsBefore(this.store.db, now - RAMP_KEPT_MS);
  }
}
