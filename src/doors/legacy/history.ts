/**
 * The legacy lists: smsList.do (the recent sends) and responseList.do (the replies received). Rows are fields
 * separated by ` | `, dates in the organisation's time zone.
 */
import { toEuros } from '../../domain/money.ts';
import { seesOrganisation } from '../../domain/tenancy.ts';
import { fail } from '../../core/errors.ts';
import type { Sends } from '../../core/sms/sends.ts';
import type { MessagingService } from '../../core/messaging/service.ts';
import type { Principal } from '../../core/tenancy/auth.ts';
import type { TenancyService } from '../../core/tenancy/service.ts';
import { formatLegacyListDate, formatLegacyMinute, parseLegacySendDate } from './dates.ts';
import { legacyRow } from './errors.ts';
import { type LegacyParams, param } from './params.ts';
import { legacySmsIdOf } from './callbacks.ts';

export const LIST_DEFAULT_SIZE = 50;
export const LIST_MAX_SIZE = 1000;
const MAX_START = 1_000_000;

/** A whole number parameter from `min` to `max`, or `fallback` when it is missing. */
function count(params: LegacyParams, name: string, fallback: number, min: number, max: number): number {
  const raw = param(params, name);
  if (raw === undefined) return fallback;
  const n = Number(raw.trim());
  if (!/^\d{1,7}$/.test(raw.trim()) || n < min || n > max) fail('INVALID_REQUEST', `${name}: must be a whole number from ${min} to ${max}`);
  return n;
}

function textOf(body: string): string {
  const parsed = JSON.parse(body) as { text?: unknown };
  return typeof parsed.text === 'string' ? parsed.text : '';
}

export class LegacyHistory {
  constructor(
    private readonly tenancy: TenancyService,
    private readonly messaging: MessagingService,
    private readonly sends: Sends,
  ) {}

  /** The SMS channels the key reads: its own, or every one of its organisation for MANAGER and ADMIN keys. */
  private async smsChannelIds(principal: Principal): Promise<string[]> {
    if (!seesOrganisation(principal.credential.roles)) return principal.channel.type === 'SMS' ? [principal.channel.id] : [];
    return (await this.tenancy.listChannels([principal.credential.organisationId])).filter((c) => c.type === 'SMS').map((c) => c.id);
  }

  private async timeZone(principal: Principal): Promise<string> {
    return (await this.tenancy.locale(principal.credential.organisationId)).timeZone;
  }

  /**
   * `smsList.do`: the `offset` (default 50, at most 1000) newest SMS sends, newest first, one row each:
   * `smsID | dd/MM/yyyy HH:mm | text | number | cost | recipients`, rows separated by an empty line (as the smsmode
   * PHP library reads them). A send to several numbers is one row with its first number and the count; a deleted send
   * is left out.
   */
  async smsList(principal: Principal, params: LegacyParams): Promise<string> {
    const size = count(params, 'offset', LIST_DEFAULT_SIZE, 1, LIST_MAX_SIZE);
    const timeZone = await this.timeZone(principal);
    const sends = await this.sends.recent(await this.smsChannelIds(principal), 'SMS', size);
    return sends
      .map((s) => legacyRow([s.id, formatLegacyListDate(s.sendAt, timeZone), s.text, s.recipient, String(toEuros(s.charged)), String(s.recipients)]))
      .join('\n\n');
  }

  /**
   * `responseList.do`: replies received, newest first, one line each:
   * `responseID | ddMMyyyy-HH:mm | from | text | to | smsID` (`smsID`: the send it answers, empty when none). By page
   * (`start`, from 0; `offset`, the page size: 50, at most 1000) or by date (`startDate` and `endDate`, ddMMyyyy-HH:mm,
   * both minutes included; at most 1000 replies).
   */
  async responseList(principal: Principal, params: LegacyParams): Promise<string> {
    const timeZone = await this.timeZone(principal);
    const startDate = param(params, 'startDate');
    const endDate = param(params, 'endDate');
    let window: { from: number; to: number; offset: number; limit: number };
    if (startDate !== undefined || endDate !== undefined) {
      if (param(params, 'start') !== undefined || param(params, 'offset') !== undefined) {
        fail('INVALID_REQUEST', 'start: page by start and offset, or by startDate and endDate, not both');
      }
      if (startDate === undefined) fail('INVALID_REQUEST', 'startDate: is required with endDate');
      if (endDate === undefined) fail('INVALID_REQUEST', 'endDate: is required with startDate');
      const date = (name: string, raw: string) =>
        parseLegacySendDate(raw, timeZone) ?? fail('INVALID_DATE', `${name}: "${raw}" must be ddMMyyyy-HH:mm (local time, ${timeZone})`);
      const from = date('startDate', startDate);
      const to = date('endDate', endDate) + 60_000;
      if (from >= to) fail('INVALID_DATE', 'startDate: is after endDate');
      window = { from, to, offset: 0, limit: LIST_MAX_SIZE + 1 };
    } else {
      window = {
        from: 0,
        to: Number.MAX_SAFE_INTEGER,
        offset: count(params, 'start', 0, 0, MAX_START),
        limit: count(params, 'offset', LIST_DEFAULT_SIZE, 1, LIST_MAX_SIZE),
      };
    }
    const replies = await this.messaging.list({ channelIds: await this.smsChannelIds(principal), direction: 'MO', type: 'SMS', ...window });
    if (replies.length > LIST_MAX_SIZE)
      fail('INVALID_REQUEST', `startDate: more than ${LIST_MAX_SIZE} replies between startDate and endDate; ask for a shorter time`);
    const originIds = [...new Set(replies.map((r) => r.origin_message_id).filter((id): id is string => id !== null))];
    const origins = new Map((await this.messaging.getMany(originIds)).map((m) => [m.id, legacySmsIdOf(m)]));
    return replies
      .map((r) =>
        legacyRow([
          r.id,
          formatLegacyMinute(r.accepted_at, timeZone),
          r.sender ?? '',
          textOf(r.body),
          r.recipient,
          (r.origin_message_id && origins.get(r.origin_message_id)) ?? '',
        ]),
      )
      .join('\n');
  }
}
