import { parseLegacySendDate } from './dates.ts';
import { type LegacyStatus, legacyGroupStatus, legacyStatusOf } from './status.ts';
import { MICROS_PER_EURO, toEuros } from '../../core/domain/money.ts';
import { type MessageStatus } from '../../core/domain/status.ts';
import { type ChannelType, type Permission, rolesAllow, seesOrganisation } from '../../core/domain/tenancy.ts';
import { analyseText, type TextEncoding, TextError } from '../../core/domain/text.ts';
import type { MessageRow } from '../../core/types.ts';
import type { AccessControl } from '../../core/tenancy/access.ts';
import type { Principal } from '../../core/tenancy/auth.ts';
import { CoreError, fail } from '../../core/errors.ts';
import type { FundsService } from '../../core/billing/funds.ts';
import { legacySmsIdOf, type LegacyExtra } from './callbacks.ts';
import type { MessagingService } from '../../core/messaging/service.ts';
import { checkCallbackUrl, normaliseRecipient, OPT_OUT_MENTION } from '../../core/messaging/sms.ts';
import type { VoiceService } from '../../core/voice/service.ts';
import type { TenancyService } from '../../core/tenancy/service.ts';

/** The parameters of a legacy call: query string and form fields, merged. */
/** The client's address, carried beside the parameters (a symbol: no parameter can be named so). */
export const CLIENT_ADDRESS: unique symbol = Symbol('client address');

export type LegacyParams = Record<string, string | undefined> & { [CLIENT_ADDRESS]?: string };

export const LEGACY_REF_CLIENT_MAX = 40;
export const LEGACY_MAX_GET_RECIPIENTS = 300;
export const LEGACY_MAX_POST_RECIPIENTS = 10_000;
export const LEGACY_DEFAULT_MAX_PARTS = 5;

export interface LegacySendResult {
  /** 0 when accepted; 33 when every message was refused for want of credit (or a consumption limit). */
  code: 0 | 33;
  smsId: string;
  messages: MessageRow[];
}

export interface LegacyReportItem {
  msisdn: string;
  status: LegacyStatus | null;
}

const CREDIT_DETAILS = new Set(['INSUFFICIENT_CREDIT', 'DAILY_LIMIT_EXCEEDED', 'ORGANISATION_MONTHLY_LIMIT_EXCEEDED']);

function param(p: LegacyParams, name: string): string | undefined {
  const v = p[name];
  return v === undefined || v.trim() === '' ? undefined : v;
}

/**
 * The legacy HTTP 1.6 operations, on the same services as REST: sends through `MessagingService.sendSms` (or the
 * campaign of a send to several numbers) and `VoiceService`, statuses through the one legacy status table,
 * transfers through `FundsService.transfer`, the balance from the organisation. Errors are CoreErrors whose
 * details name the legacy parameters; `legacyFailureOf` turns them into answer lines.
 */
export class LegacyService {
  constructor(
    private readonly access: AccessControl,
    private readonly tenancy: TenancyService,
    private readonly messaging: MessagingService,
    private readonly voice: VoiceService,
    private readonly funds: FundsService,
  ) {}

  /**
   * `accessToken` → the key's principal. A key of another channel type than the operation's is refused as an
   * authentication error (32, HTTP 403): the legacy interface has no code for a wrong channel.
   */
  async authenticate(params: LegacyParams, permission: Permission, channelType?: ChannelType): Promise<Principal> {
    const token = param(params, 'accessToken');
    if (token === undefined) fail('MISSING_API_KEY', 'accessToken: is required');
    let principal: Principal;
    try {
      ({ principal } = await this.access.enter('legacy', token, params[CLIENT_ADDRESS] ?? '', permission));
    } catch (err) {
      if (err instanceof CoreError && err.kind === 'INVALID_API_KEY') fail('INVALID_API_KEY', `accessToken: ${err.detail}`);
      throw err;
    }
    if (channelType && principal.channel.type !== channelType) {
      fail('CHANNEL_TYPE_MISMATCH', `accessToken: this operation needs the key of a ${channelType} channel; this key belongs to a ${principal.channel.type} channel`);
    }
    if (!rolesAllow(principal.credential.roles, permission)) {
      fail('FORBIDDEN_ROLE', `accessToken: a key with roles ${principal.credential.roles.join(', ')} may not do this`);
    }
    return principal;
  }

  /** `numero`: comma-separated numbers, national French (`06…`) or international (`336…`, `+336…`). */
  private recipients(params: LegacyParams, method: 'GET' | 'POST'): string[] {
    const raw = param(params, 'numero');
    if (raw === undefined) {
      if (param(params, 'groupe') !== undefined) fail('INVALID_REQUEST', 'groupe: contact groups are not supported; list the numbers in numero');
      fail('INVALID_REQUEST', 'numero: is required');
    }
    const numbers = raw.split(',').map((n) => n.trim()).filter((n) => n !== '');
    if (numbers.length === 0) fail('INVALID_REQUEST', 'numero: is required');
    const max = method === 'GET' ? LEGACY_MAX_GET_RECIPIENTS : LEGACY_MAX_POST_RECIPIENTS;
    if (numbers.length > max) {
      fail('INVALID_REQUEST', `numero: at most ${max} numbers per ${method} request${method === 'GET' ? ' (send more with POST)' : ''}`);
    }
    numbers.forEach((n, i) => normaliseRecipient(n, numbers.length > 1 ? `numero[${i}] "${n}"` : `numero "${n}"`, 'FR'));
    return numbers;
  }

  private sendDate(params: LegacyParams): Date | null {
    const raw = param(params, 'date_envoi');
    if (raw === undefined) return null;
    const ms = parseLegacySendDate(raw);
    if (ms === null) fail('INVALID_DATE', `date_envoi: "${raw}" must be ddMMyyyy-HH:mm or ddMMyyyy (French local time)`);
    return new Date(ms);
  }

  private refClient(params: LegacyParams): string | null {
    const v = param(params, 'refClient') ?? null;
    if (v !== null && v.length > LEGACY_REF_CLIENT_MAX) fail('INVALID_REQUEST', `refClient: at most ${LEGACY_REF_CLIENT_MAX} characters`);
    return v;
  }

  private callbacks(params: LegacyParams): LegacyExtra {
    const status = checkCallbackUrl(param(params, 'notification_url'), 'notification_url');
    const reply = checkCallbackUrl(param(params, 'notification_url_reponse'), 'notification_url_reponse');
    return { ...(status ? { legacyNotificationUrl: status } : {}), ...(reply ? { legacyReplyUrl: reply } : {}) };
  }

  private result(smsId: string, messages: MessageRow[]): LegacySendResult {
    const refusedForCredit =
      messages.length > 0 && messages.every((m) => m.status === 'UNDELIVERABLE' && CREDIT_DETAILS.has(m.status_detail ?? ''));
    return { code: refusedForCredit ? 33 : 0, smsId, messages };
  }

  /** `sendSMS.do`. */
  async sendSms(principal: Principal, params: LegacyParams, method: 'GET' | 'POST'): Promise<LegacySendResult> {
    const message = params.message;
    if (message === undefined || message === '') fail('INVALID_REQUEST', 'message: is required');
    const numbers = this.recipients(params, method);
    const classe = param(params, 'classe_msg') ?? '2';
    if (!['2', '4', '9'].includes(classe)) fail('INVALID_REQUEST', `classe_msg: must be 2, 4 or 9 (Unicode), got "${classe}"`);
    const encoding: TextEncoding | undefined = classe === '9' ? 'UNICODE' : undefined;
    const stopParam = param(params, 'stop');
    if (stopParam !== undefined && stopParam !== '1' && stopParam !== '2') fail('INVALID_REQUEST', 'stop: must be 1 or 2');
    const nbrRaw = param(params, 'nbr_msg');
    const maxParts = nbrRaw === undefined ? LEGACY_DEFAULT_MAX_PARTS : Number(nbrRaw);
    if (!/^\d+$/.test(nbrRaw ?? '5') || !Number.isInteger(maxParts) || maxParts < 1 || maxParts > 10) {
      fail('INVALID_REQUEST', 'nbr_msg: must be a whole number from 1 to 10');
    }
    const parts = (text: string) => {
      try {
        return analyseText(text, encoding).messagePartCount;
      } catch (err) {
        if (err instanceof TextError) fail('INVALID_REQUEST', `message: ${err.message}`);
        throw err;
      }
    };
    // stop=1 adds the opt-out mention only when the message stays one SMS; stop=2 always adds it.
    const stop = stopParam === '2' || (stopParam === '1' && parts(`${message}${OPT_OUT_MENTION}`) === 1);
    const needed = parts(stop ? `${message}${OPT_OUT_MENTION}` : message);
    if (needed > maxParts) fail('TOO_MANY_PARTS', `message: needs ${needed} SMS, more than nbr_msg (${maxParts})`);
    const sentDate = this.sendDate(params);
    const refClient = this.refClient(params);
    const extra: LegacyExtra = { ...this.callbacks(params), legacyClass: Number(classe) };
    const from = param(params, 'emetteur') ?? null;
    if (numbers.length === 1) {
      const m = await this.messaging.sendSms(principal.channel, {
        to: numbers[0]!,
        text: message,
        encoding,
        stop,
        from,
        refClient,
        sentDate,
        source: 'LEGACY',
        defaultCountry: 'FR',
        extra: extra as Record<string, unknown>,
      });
      return this.result(legacySmsIdOf(m), [m]);
    }
    const campaign = await this.messaging.sendCampaign(principal.channel, {
      recipients: numbers.map((to) => ({ to })),
      refClient,
      message: { text: message, encoding, stop, from, sentDate, defaultCountry: 'FR', extra: extra as Record<string, unknown> },
    });
    return this.result(campaign.campaignId, campaign.messages);
  }

  /** `sendVoiceMessage.do`. */
  async sendVoice(principal: Principal, params: LegacyParams, method: 'GET' | 'POST'): Promise<LegacySendResult> {
    const message = params.message;
    if (message === undefined || message.trim() === '') fail('INVALID_REQUEST', 'message: is required');
    const numbers = this.recipients(params, method);
    const input = {
      text: message,
      title: param(params, 'title') ?? null,
      language: param(params, 'language') ?? null,
      sentDate: this.sendDate(params),
      refClient: this.refClient(params),
      refClientMax: LEGACY_REF_CLIENT_MAX,
      source: 'LEGACY' as const,
      defaultCountry: 'FR' as const,
      extra: this.callbacks(params) as Record<string, unknown>,
    };
    if (numbers.length === 1) {
      const m = await this.voice.send(principal.channel, { ...input, to: numbers[0]! });
      return this.result(legacySmsIdOf(m), [m]);
    }
    const group = await this.voice.sendGroup(principal.channel, numbers, input);
    return this.result(group.campaignId, group.messages);
  }

  private async channelIds(principal: Principal): Promise<string[]> {
    if (!seesOrganisation(principal.credential.roles)) return [principal.channel.id];
    return (await this.tenancy.listChannels([principal.credential.organisationId])).map((c) => c.id);
  }

  /** The messages of an `smsID`: one message, or the campaign of a send to several numbers, in sending order. */
  private async messagesOf(principal: Principal, params: LegacyParams): Promise<{ smsId: string; campaign: boolean; messages: MessageRow[] }> {
    const smsId = param(params, 'smsID');
    if (smsId === undefined) fail('INVALID_REQUEST', 'smsID: is required');
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(smsId)) fail('NOT_FOUND', `smsID: no message ${smsId}`);
    const channelIds = await this.channelIds(principal);
    try {
      return { smsId, campaign: false, messages: [await this.messaging.get(smsId, channelIds)] };
    } catch (err) {
      if (!(err instanceof CoreError && err.kind === 'NOT_FOUND')) throw err;
    }
    try {
      await this.messaging.campaign(smsId, channelIds);
    } catch (err) {
      if (err instanceof CoreError && err.kind === 'NOT_FOUND') fail('NOT_FOUND', `smsID: no message ${smsId}`);
      throw err;
    }
    const rows = await this.messaging.list({
      channelIds,
      campaignId: smsId,
      from: 0,
      to: Number.MAX_SAFE_INTEGER,
      offset: 0,
      limit: LEGACY_MAX_POST_RECIPIENTS,
    });
    return { smsId, campaign: true, messages: rows.reverse() };
  }

  private static statusOf(m: MessageRow): LegacyStatus | null {
    return legacyStatusOf(m.status as MessageStatus, m.status_detail, m.type);
  }

  /** `smsStatus.do`: the status of the send (all its numbers together). A deleted send answers 61. */
  async status(principal: Principal, params: LegacyParams): Promise<LegacyStatus> {
    const { smsId, messages } = await this.messagesOf(principal, params);
    const statuses = messages.map(LegacyService.statusOf).filter((s): s is LegacyStatus => s !== null);
    const overall = legacyGroupStatus(statuses);
    if (!overall) fail('NOT_FOUND', `smsID: ${smsId} was deleted`);
    return overall;
  }

  /** `compteRendu.do`: each number with its status. */
  async report(principal: Principal, params: LegacyParams): Promise<LegacyReportItem[]> {
    const { messages } = await this.messagesOf(principal, params);
    return messages.map((m) => ({ msisdn: m.recipient, status: LegacyService.statusOf(m) }));
  }

  /** `deleteSMS.do`: cancels a scheduled send (refunded); anything already sent is a conflict (35). */
  async delete(principal: Principal, params: LegacyParams): Promise<string> {
    const { smsId, campaign, messages } = await this.messagesOf(principal, params);
    const channelIds = await this.channelIds(principal);
    try {
      if (campaign) await this.messaging.cancelCampaign(smsId, channelIds);
      else await this.messaging.cancel(messages[0]!.id, channelIds);
    } catch (err) {
      if (err instanceof CoreError && err.kind === 'CONFLICT') fail('CONFLICT', `smsID: ${smsId} is not scheduled any more; only a scheduled send can be deleted`);
      throw err;
    }
    return smsId;
  }

  /** `credit.do`: the balance of the key's organisation, in euros (negative when post-paid). */
  async credit(principal: Principal): Promise<number> {
    const org = await this.tenancy.getOrganisation(principal.credential.organisationId);
    return toEuros(org.balance);
  }

  /**
   * `creditTransfert.do`: moves `creditAmount` (whole euros) from the key's organisation to `targetPseudo` (the
   * target organisation's id), through the same transfer service as `POST /commons/v1/organisations/{org}/transfers`.
   */
  async transfer(principal: Principal, params: LegacyParams): Promise<string> {
    const target = param(params, 'targetPseudo');
    if (target === undefined) fail('INVALID_REQUEST', 'targetPseudo: is required');
    const amountRaw = param(params, 'creditAmount');
    if (amountRaw === undefined) fail('INVALID_REQUEST', 'creditAmount: is required');
    if (!/^\d{1,9}$/.test(amountRaw.trim()) || Number(amountRaw) === 0) {
      fail('INVALID_AMOUNT', 'creditAmount: must be a whole positive number');
    }
    const reference = param(params, 'reference') ?? null;
    if (reference !== null && reference.length > 140) fail('INVALID_REQUEST', 'reference: at most 140 characters');
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(target)) {
      fail('NOT_FOUND', `targetPseudo: no organisation ${target}`);
    }
    const result = await this.funds.transfer(
      {
        callerOrganisationId: principal.credential.organisationId,
        credentialId: principal.credential.id,
        sourceId: principal.credential.organisationId,
        destinationId: target,
        amount: Number(amountRaw) * MICROS_PER_EURO,
        reference,
        description: null,
        idempotencyKey: null,
      },
      (t) => ({ statusCode: 200, body: t.id }),
    );
    return result.body;
  }
}
