import { normaliseMsisdn } from '../../domain/phone.ts';
import { erasedNumber } from '../../domain/privacy.ts';
import type { Store } from '../../store/db.ts';
import {
  channelsWithContentRetention,
  eraseContentBatch,
  eraseInboundBatch,
  eraseNumberDetails,
  eraseOutboundBatch,
  type ErasureCounts,
  noErasure,
  numberData,
  organisationChannelIds,
  waitingOutbound,
} from '../../store/privacy.ts';
import { fail } from '../errors.ts';
import { messageObject, type MessageObject } from '../messaging/view.ts';
import type { TenancyService } from '../tenancy/service.ts';

const DAY_MS = 86_400_000;
/** Rows changed per transaction: a large erasure is many short ones. */
const BATCH = 500;
/** Messages erased by one content retention round (the rest waits for the next one). */
const ROUND = 20_000;
/** Messages an export lists at most. */
export const EXPORT_LIMIT = 10_000;

export interface PrivacySettings {
  /** TERN_CONTENT_RETENTION_DAYS: days message texts are kept where an organisation set none; null: as long as the message. */
  contentDays: number | null;
  /** What makes an erased number's stand-in unguessable (the server's secret key; empty without one). */
  secret: string;
}

/** What an erasure request did: the number's stand-in, and the rows changed or deleted in each table. */
export interface ErasureReport {
  organisationId: string;
  msisdn: string;
  /** What replaces the number in the rows kept for accounting (the same for the same number and organisation). */
  replacedBy: string;
  /** KEPT: the opt-out stays so it is still honoured, its details reset; ERASED: deleted. */
  optOut: 'KEPT' | 'ERASED';
  rows: ErasureCounts;
  erasedAt: number;
}

/** Everything an organisation keeps about a number. */
export interface NumberExport {
  organisationId: string;
  msisdn: string;
  exportedAt: number;
  messages: MessageObject[];
  /** More messages than the export lists (EXPORT_LIMIT). */
  truncated: boolean;
  contacts: Array<{
    contactId: string;
    lastName: string;
    firstName: string | null;
    company: string | null;
    other: string | null;
    birthDate: string | null;
    groups: string[];
    createdAt: number;
    updatedAt: number;
  }>;
  optOut: { source: string; createdAt: number } | null;
}

/**
 * Privacy controls: the content retention (message texts erased after an organisation's days, the messages kept),
 * erasure requests for one number, and the export of what is kept about it.
 */
export class PrivacyService {
  constructor(
    private readonly store: Store,
    private readonly tenancy: TenancyService,
    private readonly settings: PrivacySettings,
  ) {}

  /**
   * One round of the content retention: the content of every settled message older than its organisation's days,
   * channel by channel, a batch a transaction. Returns how many messages it erased.
   */
  async eraseExpiredContent(now: number): Promise<number> {
    let total = 0;
    for (const { channelId, days } of await channelsWithContentRetention(this.store.db, this.settings.contentDays)) {
      for (const direction of ['MT', 'MO'] as const) {
        for (;;) {
          const { erased, more } = await eraseContentBatch(this.store, channelId, direction, now - days * DAY_MS, BATCH, now);
          total += erased;
          if (!more || total >= ROUND) break;
        }
        if (total >= ROUND) return total;
      }
    }
    return total;
  }

  private async number(organisationId: string, input: string): Promise<string> {
    const locale = await this.tenancy.locale(organisationId);
    const n = normaliseMsisdn(input, locale.defaultCountry ? { defaultCountry: locale.defaultCountry } : {});
    if (!n.ok) fail('INVALID_REQUEST', `not a phone number (${n.reason})`, 'msisdn');
    return n.msisdn;
  }

  /** The stand-in of a number in an organisation's kept rows. */
  standIn(organisationId: string, msisdn: string): string {
    return erasedNumber(this.settings.secret, organisationId, msisdn);
  }

  /**
   * Erases a number's data in an organisation: every message text to or from it (the messages stay for accounting,
   * the number replaced by its stand-in), its contacts, its one-time passwords' and RCS conversations' number, its
   * opt-out's details (or the opt-out itself when `keepOptOut` is false). Messages still waiting to be sent are left
   * and counted. Safe to ask again: a second request finds nothing left.
   */
  async erase(organisationId: string, input: string, opts: { keepOptOut?: boolean } = {}, now = Date.now()): Promise<ErasureReport> {
    await this.tenancy.getOrganisation(organisationId);
    const msisdn = await this.number(organisationId, input);
    const standIn = this.standIn(organisationId, msisdn);
    const keepOptOut = opts.keepOptOut !== false;
    const rows = noErasure();
    for (;;) {
      const r = await eraseOutboundBatch(this.store, organisationId, msisdn, standIn, BATCH, now);
      rows.messages += r.messages;
      rows.webhookDeliveries += r.webhookDeliveries;
      if (r.messages === 0) break;
    }
    for (const channelId of await organisationChannelIds(this.store.db, organisationId)) {
      for (;;) {
        const r = await eraseInboundBatch(this.store, channelId, msisdn, standIn, BATCH, now);
        rows.inboundMessages += r.messages;
        rows.webhookDeliveries += r.webhookDeliveries;
        if (r.messages === 0) break;
      }
    }
    rows.messagesWaiting = await waitingOutbound(this.store.db, organisationId, msisdn);
    Object.assign(rows, await eraseNumberDetails(this.store, organisationId, msisdn, standIn, keepOptOut, now));
    return { organisationId, msisdn, replacedBy: standIn, optOut: keepOptOut ? 'KEPT' : 'ERASED', rows, erasedAt: now };
  }

  /** What the organisation keeps about a number: its messages (as the API shows them), contacts and opt-out. */
  async export(organisationId: string, input: string, base: string, now = Date.now()): Promise<NumberExport> {
    await this.tenancy.getOrganisation(organisationId);
    const msisdn = await this.number(organisationId, input);
    const data = await numberData(this.store.db, organisationId, await organisationChannelIds(this.store.db, organisationId), msisdn, EXPORT_LIMIT);
    const messages: MessageObject[] = [];
    for (const m of data.messages.slice(0, EXPORT_LIMIT)) messages.push(messageObject(m, await this.tenancy.getChannel(m.channel_id), base));
    return {
      organisationId,
      msisdn,
      exportedAt: now,
      messages,
      truncated: data.messages.length > EXPORT_LIMIT,
      contacts: data.contacts.map((c) => ({
        contactId: c.id,
        lastName: c.last_name,
        firstName: c.first_name,
        company: c.company,
        other: c.other,
        birthDate: c.birth_date,
        groups: c.groups,
        createdAt: c.created_at,
        updatedAt: c.updated_at,
      })),
      optOut: data.optOut ? { source: data.optOut.source, createdAt: data.optOut.created_at } : null,
    };
  }
}
