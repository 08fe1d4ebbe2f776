import type { Logger } from 'pino';
import type { RequestedDate } from '../../domain/dates.ts';
import { uuidv7 } from '../../domain/ids.ts';
import { describeNumber } from '../../domain/phone.ts';
import {
  conversationWindow,
  RCS_LIMITS,
  type RcsBody,
  rcsBodyLength,
  type RcsBodyProblem,
  rcsBodyProblem,
  rcsPriceKind,
  type RcsValidity,
  validityOf,
  validitySeconds,
  withRcsDefaults,
} from '../../domain/rcs.ts';
import { analyseText, exceedsPartLimit, MAX_MESSAGE_PARTS, TextError } from '../../domain/text.ts';
import { networkLookup } from '../lookup/enrich.ts';
import type { Channel } from '../../store/channels.ts';
import type { Store } from '../../store/db.ts';
import type { MessageRow } from '../../store/messages.ts';
import {
  addConversationMessage,
  type ConversationRow,
  conversationMessages,
  findConversation,
  findOpenConversation,
  listConversations,
  lockConversationCharge,
  openConversation,
} from '../../store/rcs-conversations.ts';
import { CoreError, fail, underField } from '../errors.ts';
import type { EventConsumer } from '../events.ts';
import type { PreparedMessage, SharedCharge } from '../messaging/accept.ts';
import { outboundMessageRow } from '../messaging/message-row.ts';
import type { MessagingOptions, MessagingService } from '../messaging/service.ts';
import { prepareSms } from '../sms/prepare.ts';
import { checkCallbackUrl, checkRefClient, type MessageSource, normaliseRecipient, resolveSender, resolveSendAt } from '../messaging/prepare.ts';

/** What Tern needs from the RCS operator network beyond submitting: capability and revocation. */
export interface RcsNetwork {
  capability(msisdn: string): Promise<{ capable: boolean; features: string[] }>;
  /** What of a body the connector RCS messages to this number go through cannot carry, or null. */
  bodyProblem(msisdn: string, body: RcsBody): { connector: string; problem: RcsBodyProblem } | null;
  /** Withdraws messages not yet delivered, at the connectors that carry them (before their SMS fallback goes out). */
  revoke(messages: Array<{ id: string; connector: string | null }>): Promise<void>;
}

export interface RcsCapability {
  msisdn: string;
  capable: boolean;
  features: string[];
}

/** The SMS sent instead when the RCS message cannot reach the user (Tern's extension; smsmode has none). */
export interface RcsFallback {
  text: string;
  from?: string | null;
}

export interface RcsSendInput {
  to: string;
  body: RcsBody;
  from?: string | null;
  refClient?: string | null;
  /** A local date and time is read in the organisation's time zone. */
  sentDate?: RequestedDate | null;
  validity?: RcsValidity | null;
  callbackUrlStatus?: string | null;
  callbackUrlMo?: string | null;
  fallback?: RcsFallback | null;
  source?: MessageSource;
  /** The campaign the message is part of. */
  campaignId?: string | null;
  /** The recipient's field name when it is not `recipient.to` (a campaign's `recipients[i].to`). */
  toField?: string;
}

/** Fields of the RCS message object kept in the row's `extra`. */
interface RcsExtra {
  validity: RcsValidity;
  fallback?: { text: string; from: string | null };
  fallbackMessageId?: string;
  conversationId?: string;
}

export interface ConversationQuery {
  channelIds: string[];
  from: number;
  to: number;
  msisdn?: string;
  state?: 'OPEN' | 'CLOSED';
  page: number;
  pageSize: number;
}

export interface ConversationWithMessages {
  conversation: ConversationRow;
  messages: MessageRow[];
}

/**
 * RCS on the one messaging pipeline: validation and pricing of rich messages (BASIC, SINGLE, or CONVERSATION when
 * a conversation opened by the user is running), the recipient's capability, the SMS fallback (at send time for a
 * non-capable recipient, at the end of validity for a message still not delivered), and conversations.
 */
export class RcsService {
  constructor(
    private readonly store: Store,
    private readonly messaging: MessagingService,
    private readonly network: RcsNetwork,
    private readonly options: MessagingOptions,
    private readonly logger: Logger,
  ) {}

  async capability(msisdn: string, field = 'msisdn'): Promise<RcsCapability> {
    const n = normaliseRecipient(msisdn, field);
    if (!describeNumber(n).valid) return { msisdn: n, capable: false, features: [] };
    return { msisdn: n, ...(await this.network.capability(n)) };
  }

  /**
   * Validates, prices and accepts one RCS message. A number that is not a valid phone number, or a recipient that
   * is not RCS-capable without a fallback, ends UNDELIVERABLE at no charge; with a fallback, the RCS message ends
   * UNDELIVERED / FALLBACK_SMS at no charge and the SMS is accepted in the same transaction. A message in a
   * conversation costs the conversation's price only when none of its messages is charged yet, which the accept
   * transaction settles.
   */
  async send(channel: Channel, input: RcsSendInput, afterInsert?: PreparedMessage['afterInsert'], now = Date.now()): Promise<MessageRow> {
    const { body, locale, sender, refClient, callbackUrlStatus, callbackUrlMo, sendAt, validity, seconds, fallback } = await this.checkShared(
      channel,
      input,
      now,
    );
    const recipient = normaliseRecipient(input.to, input.toField ?? 'recipient.to', locale.defaultCountry);

    const number = describeNumber(recipient);
    const capable = number.valid && (await this.network.capability(recipient)).capable;
    if (capable) {
      // Refused now rather than lost at submit: the operator that would carry it has no place for part of it.
      const refused = this.network.bodyProblem(recipient, body);
      if (refused) fail('INVALID_REQUEST', `${refused.problem.message} (connector ${refused.connector} cannot carry it)`, `body.${refused.problem.path}`);
    }
    const network = number.valid ? await networkLookup(recipient) : null;

    const conversation = number.valid ? await findOpenConversation(this.store.db, channel.id, recipient, now) : null;
    const kind = rcsPriceKind(body, conversation !== null);
    const price = this.messaging.priceListNow.unitPrice('RCS', number.isoCountryCode, kind) ?? 0;
    const id = uuidv7(now);
    const extra: RcsExtra = {
      validity,
      ...(fallback ? { fallback: { text: fallback.input.text, from: fallback.input.from ?? null } } : {}),
      ...(conversation ? { conversationId: conversation.id } : {}),
    };
    const fallsBackNow = number.valid && !capable && fallback !== null;
    const prepared: PreparedMessage = {
      channel,
      price: number.valid ? price : 0,
      units: 1,
      rejection: !number.valid ? 'INVALID_PHONE_NUMBER' : !capable && !fallback ? 'NOT_RCS_CAPABLE' : null,
      checkBlacklist: channel.flow === 'MARKETING',
      row: outboundMessageRow({
        id,
        channel,
        type: 'RCS',
        recipient,
        sender,
        body,
        units: 1,
        length: rcsBodyLength(body),
        price: number.valid ? price : 0,
        priceKind: kind,
        refClient,
        callbackUrlStatus,
        callbackUrlMo,
        now,
        sendAt,
        validityUntil: sendAt + seconds * 1000,
        country: number.isoCountryCode,
        network,
        source: input.source ?? 'REST',
        campaignId: input.campaignId,
        extra,
      }),
      ...(conversation && !fallsBackNow ? { sharedCharge: this.conversationCharge(conversation.id) } : {}),
    };
    prepared.afterInsert = async (db, row) => {
      if (conversation) await addConversationMessage(db, conversation.id, row.id, row.accepted_at);
      if (afterInsert) await afterInsert(db, row);
    };
    if (!fallsBackNow) return this.messaging.accept(prepared);

    const sms = await underField('fallback.', () => this.prepareFallbackSms(fallback.channel, prepared.row, fallback.input, input.sentDate ?? null, now));
    Object.assign(prepared, { price: 0, checkBlacklist: false, settled: { status: 'UNDELIVERED', detail: 'FALLBACK_SMS' } });
    Object.assign(prepared.row, {
      price: 0,
      extra: JSON.stringify({ ...extra, fallbackMessageId: sms.row.id } satisfies RcsExtra),
    });
    // Submitted together, so both land in the same group-committed transaction.
    const [rcs] = await Promise.all([this.messaging.accept(prepared), this.messaging.accept(sms)]);
    return rcs;
  }

  /** The charge a conversation's messages share: the first of them charged pays it. */
  private conversationCharge(conversationId: string): SharedCharge {
    return {
      key: `rcs-conversation|${conversationId}`,
      lockAndCheckPaid: (db) => lockConversationCharge(db, this.store.dialect, conversationId),
    };
  }

  /** What an RCS message checks whoever it goes to; a campaign checks it once for all its recipients. */
  async checkShared(channel: Channel, input: Omit<RcsSendInput, 'to'>, now = Date.now()) {
    const problem = rcsBodyProblem(input.body);
    if (problem) fail('INVALID_REQUEST', problem.message, `body.${problem.path}`);
    const body = withRcsDefaults(input.body);
    const { locale } = await this.messaging.prepareContext(channel, now);
    const sender = resolveSender(channel, input.from);
    const refClient = checkRefClient(input.refClient);
    const callbackUrlStatus = checkCallbackUrl(input.callbackUrlStatus, 'callbackUrlStatus');
    const callbackUrlMo = checkCallbackUrl(input.callbackUrlMo, 'callbackUrlMo');
    const sendAt = resolveSendAt(input.sentDate, now, locale.timeZone);
    const validity = input.validity ?? validityOf(Math.min(this.options.messageValiditySeconds, RCS_LIMITS.maxValiditySeconds));
    const seconds = validitySeconds(validity);
    if (!seconds.ok) fail('INVALID_REQUEST', seconds.reason, 'validity');
    const fallback = input.fallback ? await this.checkFallback(channel, input.fallback, 'fallback') : null;
    return { body, locale, sender, refClient, callbackUrlStatus, callbackUrlMo, sendAt, validity, seconds: seconds.seconds, fallback };
  }

  /** The fallback is checked at send time, so a bad one is a 400 of the request rather than a lost SMS later. */
  private async checkFallback(channel: Channel, fallback: RcsFallback, field: string) {
    if (!channel.fallbackSmsChannelId) {
      fail('INVALID_REQUEST', 'this RCS channel has no fallback SMS channel (the operator sets its fallbackSmsChannelId)', field);
    }
    let smsChannel: Channel;
    try {
      smsChannel = await this.messaging.channel(channel.fallbackSmsChannelId);
    } catch (err) {
      if (err instanceof CoreError && err.kind === 'NOT_FOUND') {
        fail('INVALID_REQUEST', "the channel's fallback SMS channel no longer exists", field);
      }
      throw err;
    }
    let analysis;
    try {
      analysis = analyseText(fallback.text);
    } catch (err) {
      if (err instanceof TextError) fail('INVALID_REQUEST', err.message, `${field}.text`);
      throw err;
    }
    if (analysis.length === 0) fail('INVALID_REQUEST', 'must not be empty', `${field}.text`);
    if (exceedsPartLimit(analysis)) {
      fail('TOO_MANY_PARTS', `${analysis.messagePartCount} parts; at most ${MAX_MESSAGE_PARTS} parts are allowed`, `${field}.text`);
    }
    resolveSender(smsChannel, fallback.from, `${field}.from`);
    return { channel: smsChannel, input: fallback };
  }

  /** An ordinary SMS of the fallback channel, to the same user, with the RCS message's reference and callbacks. */
  private async prepareFallbackSms(
    smsChannel: Channel,
    rcs: MessageRow,
    fallback: RcsFallback,
    sentDate: RequestedDate | null,
    now: number,
  ): Promise<PreparedMessage> {
    return prepareSms(
      smsChannel,
      {
        to: rcs.recipient,
        text: fallback.text,
        from: fallback.from,
        refClient: rcs.ref_client,
        sentDate,
        callbackUrlStatus: rcs.callback_url_status,
        callbackUrlMo: rcs.callback_url_mo,
        source: 'FALLBACK',
        messageId: uuidv7(now),
        // Part of the RCS message's campaign, so cancelling or moving the campaign takes it along.
        campaignId: rcs.campaign_id,
        extra: { fallbackFor: rcs.id },
      },
      await this.messaging.prepareContext(smsChannel, now),
    );
  }

  /**
   * The end of RCS messages' validity: those with a fallback go through `expire`; the others are withdrawn at their
   * connector (RBM's revocation) and expire as usual. Returns the ids `expire` took care of.
   */
  async validityEnded(messageIds: string[], now = Date.now()): Promise<string[]> {
    const handled = await this.expire(messageIds, now);
    const done = new Set(handled);
    const rest = (await this.messaging.getMany(messageIds.filter((id) => !done.has(id)))).filter((m) => m.type === 'RCS' && m.status === 'ENROUTE');
    if (rest.length > 0) {
      await this.network
        .revoke(rest.map((m) => ({ id: m.id, connector: m.connector })))
        .catch((err) => this.logger.warn({ err }, 'RCS messages could not be revoked'));
    }
    return handled;
  }

  /**
   * Expiry handler (and what an operator's UNDELIVERED report leads to): RCS messages with a fallback still not delivered at the end of their validity are revoked,
   * end UNDELIVERED / FALLBACK_SMS (refunded: the user never got them) and their SMS goes out. Returns the ids it
   * took care of; the others expire as usual.
   */
  async expire(messageIds: string[], now = Date.now()): Promise<string[]> {
    const rows = (await this.messaging.getMany(messageIds)).filter((m) => m.type === 'RCS' && m.status === 'ENROUTE');
    const candidates: Array<{ rcs: MessageRow; sms: PreparedMessage }> = [];
    for (const rcs of rows) {
      const extra = (rcs.extra ? JSON.parse(rcs.extra) : {}) as Partial<RcsExtra>;
      if (!extra.fallback) continue;
      try {
        const channel = await this.messaging.channel(rcs.channel_id);
        if (!channel.fallbackSmsChannelId) continue;
        const smsChannel = await this.messaging.channel(channel.fallbackSmsChannelId);
        const sms = await this.prepareFallbackSms(smsChannel, rcs, extra.fallback, null, now);
        candidates.push({ rcs, sms });
      } catch (err) {
        this.logger.warn({ err, messageId: rcs.id }, 'RCS fallback SMS could not be prepared; the message expires without it');
      }
    }
    if (candidates.length === 0) return [];
    const { applied } = await this.messaging.applyStatusNow(
      candidates.map((c) => ({
        messageId: c.rcs.id,
        status: 'UNDELIVERED' as const,
        detail: 'FALLBACK_SMS',
        at: now,
        refund: true,
        extra: { fallbackMessageId: c.sms.row.id },
      })),
    );
    // Only the messages that really ended here fall back: a receipt may have delivered one in the meantime.
    const ended = new Set(applied.map((m) => m.id));
    const going = candidates.filter((c) => ended.has(c.rcs.id));
    if (going.length > 0) {
      await this.network.revoke(going.map((c) => ({ id: c.rcs.id, connector: c.rcs.connector })));
      await Promise.all(going.map((c) => this.messaging.accept(c.sms)));
    }
    return candidates.map((c) => c.rcs.id);
  }

  /**
   * Opens a conversation on a user's MO (or adds the MO to the one running), in the MO's own transaction; MOs of a
   * user arriving at once on any nodes land in one. MO rows carry the user in `sender` and the agent in `recipient`.
   */
  readonly conversationHook: EventConsumer = async (db, events, messages) => {
    for (const e of events) {
      if (e.kind !== 'MO') continue;
      const m = messages.get(e.message_id);
      if (!m || m.type !== 'RCS' || m.direction !== 'MO' || !m.sender) continue;
      let conversation = await findOpenConversation(db, m.channel_id, m.sender, m.accepted_at);
      if (!conversation) {
        const window = conversationWindow(m.accepted_at);
        conversation = await openConversation(db, {
          id: uuidv7(m.accepted_at),
          organisation_id: m.organisation_id,
          channel_id: m.channel_id,
          msisdn: m.sender,
          agent: m.recipient,
          opened_at: window.openedAt,
          expires_at: window.expiresAt,
          opened_by: m.id,
        });
      }
      await addConversationMessage(db, conversation.id, m.id, m.accepted_at);
    }
  };

  async conversations(q: ConversationQuery, now = Date.now()): Promise<ConversationWithMessages[]> {
    const rows = await listConversations(this.store.db, {
      channelIds: q.channelIds,
      from: q.from,
      to: q.to,
      msisdn: q.msisdn,
      state: q.state ? { open: q.state === 'OPEN', now } : undefined,
      offset: (q.page - 1) * q.pageSize,
      limit: q.pageSize,
    });
    const messages = await conversationMessages(
      this.store.db,
      rows.map((r) => r.id),
    );
    return rows.map((conversation) => ({ conversation, messages: messages.get(conversation.id) ?? [] }));
  }

  async conversation(id: string, channelIds: string[]): Promise<ConversationWithMessages> {
    const conversation = await findConversation(this.store.db, id);
    if (!conversation || !channelIds.includes(conversation.channel_id)) fail('NOT_FOUND', `conversation ${id} not found`);
    const messages = await conversationMessages(this.store.db, [id]);
    return { conversation, messages: messages.get(id) ?? [] };
  }
}
