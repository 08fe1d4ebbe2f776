import { parseLegacySendDate } from './dates.ts';
import { type LegacyStatus, legacyGroupStatus, legacyStatusOf } from './status.ts';
import { MICROS_PER_EURO, toEuros } from '../../domain/money.ts';
import { type MessageStatus } from '../../domain/status.ts';
import { type ChannelType, type Permission, rolesAllow, seesOrganisation } from '../../domain/tenancy.ts';
import type { MessageRow } from '../../core/types.ts';
import type { AccessControl } from '../../core/tenancy/access.ts';
import type { Principal } from '../../core/tenancy/auth.ts';
import { CoreError, fail } from '../../core/errors.ts';
import type { FundsService } from '../../core/billing/funds.ts';
import { legacySmsIdOf, type LegacyExtra } from './callbacks.ts';
import type { CampaignService } from '../../core/campaigns/service.ts';
import type { MessagingService } from '../../core/messaging/service.ts';
import type { SmsService } from '../../core/sms/service.ts';
import { checkCallbackUrl, normaliseRecipient } from '../../core/messaging/prepare.ts';
import type { VoiceService } from '../../core/voice/service.ts';
import type { TenancyService } from '../../core/tenancy/service.ts';
import type { CountryCode } from '../../domain/phone.ts';
import type { ContactService } from '../../core/contacts/service.ts';
import type { BatchItem, Sends } from '../../core/sms/sends.ts';
import type { SubAccountService } from '../../core/tenancy/sub-accounts.ts';
import { parseBatchFile } from './csv.ts';
import { legacyDetail } from './errors.ts';
import { smsOptionsOf, stopFor } from './sms-options.ts';
import { optOutLine } from '../../domain/opt-out.ts';
import { CLIENT_ADDRESS, TAKE_TURN, LEGACY_MAX_GET_RECIPIENTS, LEGACY_MAX_POST_RECIPIENTS, LEGACY_REF_CLIENT_MAX, type LegacyParams, param } from './params.ts';

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
    private readonly sms: SmsService,
    private readonly campaigns: CampaignService,
    private readonly voice: VoiceService,
    private readonly funds: FundsService,
    private readonly subAccounts: SubAccountService,
    private readonly contacts: ContactService,
    private readonly sends: Sends,
  ) {}

  /**
   * `accessToken` → the key's principal; without one, a sub-account's `pseudo` (or `username`) and `pass` → its login's
   * principal (an ADMIN key of its SMS channel). A key of another channel type than the operation's is refused as an
   * authentication error (32, HTTP 403): the legacy interface has no code for a wrong channel.
   */
  async authenticate(params: LegacyParams, permission: Permission, channelType?: ChannelType): Promise<Principal> {
    const token = param(params, 'accessToken');
    const login = param(params, 'pseudo') ?? param(params, 'username');
    const address = params[CLIENT_ADDRESS] ?? '';
    if (token === undefined && login === undefined) fail('MISSING_API_KEY', 'accessToken: is required');
    const by = token !== undefined ? 'accessToken' : 'pseudo';
    let principal: Principal;
    try {
      if (token !== undefined) ({ principal } = await this.access.enter('legacy', token, address, permission));
      else {
        const pass = params.pass;
        if (pass === undefined || pass === '') fail('MISSING_API_KEY', 'pass: is required with pseudo');
        ({ principal } = await this.access.enterWith('legacy', `${login}\u0000${pass}`, address, permission, () =>
          this.subAccounts.authenticate(login!, pass),
        ));
      }
    } catch (err) {
      if (err instanceof CoreError && err.kind === 'INVALID_API_KEY') fail('INVALID_API_KEY', `${by}: ${err.detail}`);
      throw err;
    }
    if (channelType && principal.channel.type !== channelType) {
      fail('CHANNEL_TYPE_MISMATCH', `${by}: this operation needs the key of a ${channelType} channel; this key belongs to a ${principal.channel.type} channel`);
    }
    if (!rolesAllow(principal.credential.roles, permission)) {
      fail('FORBIDDEN_ROLE', `${by}: a key with roles ${principal.credential.roles.join(', ')} may not do this`);
    }
    await params[TAKE_TURN]?.(principal.channel.organisationId);
    return principal;
  }

  /** `numero`: comma-separated numbers, national (`06…`, read in `country`) or international (`336…`, `+336…`). */
  private recipients(params: LegacyParams, method: 'GET' | 'POST', country: CountryCode): string[] {
    const raw = param(params, 'numero');
    if (raw === undefined) {
      if (param(params, 'groupe') !== undefined) fail('INVALID_REQUEST', 'groupe: contact groups are for sendSMS.do; list the numbers in numero');
      fail('INVALID_REQUEST', 'numero: is required');
    }
    const numbers = raw
      .split(',')
      .map((n) => n.trim())
      .filter((n) => n !== '');
    if (numbers.length === 0) fail('INVALID_REQUEST', 'numero: is required');
    const max = method === 'GET' ? LEGACY_MAX_GET_RECIPIENTS : LEGACY_MAX_POST_RECIPIENTS;
    if (numbers.length > max) {
      fail('INVALID_REQUEST', `numero: at most ${max} numbers per ${method} request${method === 'GET' ? ' (send more with POST)' : ''}`);
    }
    numbers.forEach((n, i) => normaliseRecipient(n, numbers.length > 1 ? `numero[${i}] "${n}"` : `numero "${n}"`, country));
    return numbers;
  }

  /** `groupe` (sendSMS.do): the numbers of one of the organisation's contact groups (addContact.do); null without one. */
  private async groupRecipients(principal: Principal, params: LegacyParams): Promise<string[] | null> {
    const group = param(params, 'groupe');
    if (group === undefined) return null;
    if (param(params, 'numero') !== undefined) fail('INVALID_REQUEST', 'groupe: give numero or groupe, not both');
    let numbers: string[];
    try {
      numbers = await this.contacts.groupNumbers(principal.credential.organisationId, group, LEGACY_MAX_POST_RECIPIENTS + 1);
    } catch (err) {
      if (err instanceof CoreError && err.kind === 'NOT_FOUND') fail('INVALID_REQUEST', `groupe: ${err.reason}`);
      throw err;
    }
    if (numbers.length === 0) fail('INVALID_REQUEST', `groupe: the group "${group.trim()}" has no contact`);
    if (numbers.length > LEGACY_MAX_POST_RECIPIENTS)
      fail('INVALID_REQUEST', `groupe: a send goes to at most ${LEGACY_MAX_POST_RECIPIENTS} numbers; the group has more`);
    return numbers;
  }

  private sendDate(params: LegacyParams, timeZone: string): Date | null {
    const raw = param(params, 'date_envoi');
    if (raw === undefined) return null;
    const ms = parseLegacySendDate(raw, timeZone);
    if (ms === null) fail('INVALID_DATE', `date_envoi: "${raw}" must be ddMMyyyy-HH:mm or ddMMyyyy (local time, ${timeZone})`);
    return new Date(ms);
  }

  /**
   * The organisation's country and time zone. Without a default country, national numbers are French: the legacy
   * interface has always read `06…` so, as the real API does.
   */
  private async locale(principal: Principal): Promise<{ country: CountryCode; timeZone: string }> {
    const locale = await this.tenancy.locale(principal.channel.organisationId);
    return { country: locale.defaultCountry ?? 'FR', timeZone: locale.timeZone };
  }

  /** The organisation's opt-out line, which `stop=1` must fit in one SMS with. */
  private async optOutLine(principal: Principal): Promise<string> {
    return optOutLine(await this.tenancy.optOut(principal.channel.organisationId));
  }

  private refClient(params: LegacyParams): string | null {
    const v = param(params, 'refClient') ?? null;
    if (v !== null && v.length > LEGACY_REF_CLIENT_MAX) fail('INVALID_REQUEST', `refClient: at most ${LEGACY_REF_CLIENT_MAX} characters`);
    return v;
  }

  /** The callback URLs, and the time zone their dates are written in. */
  private callbacks(params: LegacyParams, timeZone: string): LegacyExtra {
    const status = checkCallbackUrl(param(params, 'notification_url'), 'notification_url');
    const reply = checkCallbackUrl(param(params, 'notification_url_reponse'), 'notification_url_reponse');
    if (!status && !reply) return {};
    return { ...(status ? { legacyNotificationUrl: status } : {}), ...(reply ? { legacyReplyUrl: reply } : {}), legacyTimeZone: timeZone };
  }

  private result(smsId: string, messages: MessageRow[]): LegacySendResult {
    const refusedForCredit = messages.length > 0 && messages.every((m) => m.status === 'UNDELIVERABLE' && CREDIT_DETAILS.has(m.status_detail ?? ''));
    return { code: refusedForCredit ? 33 : 0, smsId, messages };
  }

  /** `sendSMS.do`. */
  async sendSms(principal: Principal, params: LegacyParams, method: 'GET' | 'POST'): Promise<LegacySendResult> {
    const message = params.message;
    if (message === undefined || message === '') fail('INVALID_REQUEST', 'message: is required');
    const locale = await this.locale(principal);
    const numbers = (await this.groupRecipients(principal, params)) ?? this.recipients(params, method, locale.country);
    const options = smsOptionsOf(params);
    const { encoding } = options;
    const stop = stopFor(message, options, 'message', await this.optOutLine(principal));
    const sentDate = this.sendDate(params, locale.timeZone);
    const refClient = this.refClient(params);
    const extra: LegacyExtra = { ...this.callbacks(params, locale.timeZone), legacyClass: options.classe };
    const from = param(params, 'emetteur') ?? null;
    if (numbers.length === 1) {
      const m = await this.sms.send(principal.channel, {
        to: numbers[0]!,
        text: message,
        encoding,
        stop,
        from,
        refClient,
        sentDate,
        source: 'LEGACY',
        defaultCountry: locale.country,
        extra: extra as Record<string, unknown>,
      });
      return this.result(legacySmsIdOf(m), [m]);
    }
    const campaign = await this.campaigns.create('SMS', principal.channel, {
      recipients: numbers.map((to) => ({ to })),
      refClient,
      message: { text: message, encoding, stop, from, sentDate, defaultCountry: locale.country, extra: extra as Record<string, unknown> },
    });
    return this.result(campaign.campaignId, campaign.messages);
  }

  /** `sendVoiceMessage.do`. */
  async sendVoice(principal: Principal, params: LegacyParams, method: 'GET' | 'POST'): Promise<LegacySendResult> {
    const message = params.message;
    if (message === undefined || message.trim() === '') fail('INVALID_REQUEST', 'message: is required');
    const locale = await this.locale(principal);
    const numbers = this.recipients(params, method, locale.country);
    const input = {
      text: message,
      title: param(params, 'title') ?? null,
      language: param(params, 'language') ?? null,
      sentDate: this.sendDate(params, locale.timeZone),
      refClient: this.refClient(params),
      refClientMax: LEGACY_REF_CLIENT_MAX,
      source: 'LEGACY' as const,
      defaultCountry: locale.country,
      extra: this.callbacks(params, locale.timeZone) as Record<string, unknown>,
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
      await this.campaigns.get(smsId, channelIds);
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
      if (campaign) await this.campaigns.cancel(smsId, channelIds);
      else await this.messaging.cancel(messages[0]!.id, channelIds);
    } catch (err) {
      if (err instanceof CoreError && err.kind === 'CONFLICT')
        fail('CONFLICT', `smsID: ${smsId} is not scheduled any more; only a scheduled send can be deleted`);
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
   * `creditTransfert.do`: moves `creditAmount` (whole euros) from the key's organisation to `targetPseudo` (a
   * sub-account's login, or the target organisation's id), through the same transfer service as
   * `POST /commons/v1/organisations/{org}/transfers`.
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
    // A sub-account's login, or an organisation's id.
    const destinationId =
      (await this.subAccounts.organisationOfLogin(target)) ??
      (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(target) ? target : fail('NOT_FOUND', `targetPseudo: no account ${target}`));
    const result = await this.funds.transfer(
      {
        callerOrganisationId: principal.credential.organisationId,
        credentialId: principal.credential.id,
        sourceId: principal.credential.organisationId,
        destinationId,
        amount: Number(amountRaw) * MICROS_PER_EURO,
        reference,
        description: null,
        idempotencyKey: null,
      },
      (t) => ({ statusCode: 200, body: t.id }),
    );
    return result.body;
  }

  /**
   * `sendSMSBatch.do`: one SMS per row of the `fichier` file (`numero;message;emetteur[;ref]`), with sendSMS.do's
   * options for all of them; the row's `emetteur` and `ref` win over the request's. One campaign, whose id is the
   * answer's; one bad row refuses the whole file, naming its line.
   */
  async sendBatch(principal: Principal, params: LegacyParams): Promise<LegacySendResult> {
    const file = params.fichier;
    if (file === undefined) fail('INVALID_REQUEST', 'fichier: is required (a multipart/form-data file part)');
    const rows = parseBatchFile(file);
    const options = smsOptionsOf(params);
    const locale = await this.locale(principal);
    const sentDate = this.sendDate(params, locale.timeZone);
    const refClient = this.refClient(params);
    const extra = { ...this.callbacks(params, locale.timeZone), legacyClass: options.classe } as Record<string, unknown>;
    const from = param(params, 'emetteur') ?? null;
    const mention = await this.optOutLine(principal);
    const items: BatchItem[] = rows.map((row) => {
      if (row.ref.length > LEGACY_REF_CLIENT_MAX) fail('INVALID_REQUEST', `line ${row.line}: ref: at most ${LEGACY_REF_CLIENT_MAX} characters`, 'fichier');
      return {
        to: row.numero,
        text: row.message,
        encoding: options.encoding,
        stop: stopFor(row.message, options, `fichier: line ${row.line}: message`, mention),
        from: row.emetteur || from,
        refClient: row.ref || refClient,
        sentDate,
        defaultCountry: locale.country,
        extra,
      };
    });
    try {
      const { campaignId, messages } = await this.sends.sendBatch(principal.channel, items, refClient);
      return this.result(campaignId, messages);
    } catch (err) {
      const m = err instanceof CoreError ? /^items\[(\d+)\]\.(.+)$/.exec(err.field ?? '') : null;
      if (!m) throw err;
      const inner = new CoreError((err as CoreError).kind, (err as CoreError).reason, m[2]);
      throw new CoreError(inner.kind, `line ${rows[Number(m[1])]!.line}: ${legacyDetail(inner)}`, 'fichier');
    }
  }
}
