import type { Logger } from 'pino';
import { uuidv7 } from '../../domain/ids.ts';
import {
  decideCheck,
  decideSend,
  DEFAULT_OTP_LOCALE,
  DEFAULT_TEMPLATES,
  HOUR_MS,
  maskedText,
  normaliseCode,
  OTP_ALPHABETS,
  OTP_CHANNELS,
  OTP_LIMITS,
  OTP_LOCALES,
  type OtpAlphabet,
  type OtpChannel,
  type OtpLocale,
  type OtpStatus,
  renderTemplate,
  type SendRules,
  spokenText,
  statusAt,
  templateProblem,
} from '../../domain/otp.ts';
import type { Channel } from '../../store/channels.ts';
import { type Db, inTransaction, type Store } from '../../store/db.ts';
import type { MessageRow } from '../../store/messages.ts';
import {
  clearFallback,
  conversionSince,
  findOtp,
  insertOtp,
  insertOtpSend,
  lockOtp,
  lockRecipient,
  OTP_TIMER_QUEUE,
  type OtpRow,
  pendingOtps,
  pruneOtps,
  sendSecrets,
  sendTimesSince,
  updateOtp,
} from '../../store/otp.ts';
import { LeasedQueue } from '../../store/queue.ts';
import { CoreError, fail, RateLimitedError } from '../errors.ts';
import type { PreparedMessage } from '../messaging/accept.ts';
import type { MessagingService } from '../messaging/service.ts';
import { prepareSms } from '../sms/prepare.ts';
import { checkRefClient, normaliseRecipient } from '../messaging/prepare.ts';
import type { OutboundMessage } from '../ports.ts';
import type { TenancyService } from '../tenancy/service.ts';
import type { VoiceService } from '../voice/service.ts';
import { MAX_VOICE_TEXT_LENGTH } from '../voice/service.ts';
import { writeEventWebhook } from '../webhooks/events.ts';
import type { OtpCodes } from './codes.ts';
import { otpObject } from './view.ts';

export interface OtpOptions {
  /** How long after a send to a number with a pending code another one is refused. */
  cooldownSeconds: number;
  /** Sends of codes to one number in any hour. */
  sendsPerHour: number;
  /** A second request for a number with a pending code sends the same code (otherwise a new one, and the old one stops working). */
  reuseCode: boolean;
}

/** Told of what happens to codes (metrics). */
export interface OtpEvents {
  sent?(channel: OtpChannel): void;
  settled?(status: Exclude<OtpStatus, 'PENDING'>): void;
  checked?(result: 'APPROVED' | 'WRONG_CODE' | 'EXPIRED' | 'CANCELLED' | 'NOT_PENDING'): void;
}

export interface OtpRequest {
  to: string;
  channel?: OtpChannel;
  codeLength?: number;
  alphabet?: OtpAlphabet;
  ttlSeconds?: number;
  template?: string;
  locale?: OtpLocale;
  refClient?: string | null;
  maxAttempts?: number;
  /** SMS only: a call reads the code out when the text message is not delivered this long after it was sent. */
  fallbackAfterSeconds?: number;
}

interface CheckedRequest {
  recipient: string;
  channel: OtpChannel;
  codeLength: number;
  alphabet: OtpAlphabet;
  ttlMs: number;
  template: string;
  locale: OtpLocale;
  refClient: string | null;
  maxAttempts: number;
  fallbackAfterMs: number | null;
}

/** One send of a code, and what it does to its one-time password when its message is stored. */
interface Send {
  kind: 'NEW' | 'RESEND' | 'FALLBACK';
  otpId: string;
  via: OtpChannel;
  /** The channel the message goes through (the key's SMS channel, or the organisation's VOICE channel). */
  channel: Channel;
  /** The SMS channel the code belongs to. */
  ownerChannelId: string;
  organisationId: string;
  recipient: string;
  salt: string;
  codeLength: number;
  alphabet: OtpAlphabet;
  template: string;
  locale: OtpLocale;
  refClient: string | null;
  maxAttempts: number;
  ttlMs: number;
  fallbackAfterMs: number | null;
  source: 'REST' | 'FALLBACK';
  now: number;
}

const TIMER_BATCH = 100;
const TIMER_LEASE_MS = 30_000;
/** The window of the conversion figure. */
const CONVERSION_WINDOW_MS = 24 * HOUR_MS;

function oneOf<T extends string>(value: T | undefined, allowed: readonly T[], fallback: T, field: string): T {
  if (value === undefined) return fallback;
  if (!allowed.includes(value)) fail('INVALID_REQUEST', `must be one of ${allowed.join(', ')}`, field);
  return value;
}

function inRange(value: number | undefined, bounds: { min: number; max: number }, fallback: number, field: string): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < bounds.min || value > bounds.max)
    fail('INVALID_REQUEST', `a whole number from ${bounds.min} to ${bounds.max}`, field);
  return value;
}

/**
 * The verify API: a code sent to a number — as a text message, or read out by a call on a VOICE channel of the same
 * organisation, or both (a call when the text is not delivered in time) — and checked once. The code is never
 * stored (see OtpCodes) and never shown: the message that carries it is stored and listed with the code masked
 * (`Your code is ******`, `body.masked`), and connectors are given the real text as they submit it (`reveal`).
 * Sends to a number are serialised on a lock row, so the cooldown, the hourly number and "one pending code per
 * number" hold across nodes; the code's state is written in the transaction that stores its message.
 */
export class OtpService {
  readonly timers: LeasedQueue<OtpRow>;
  private readonly rules: SendRules;

  constructor(
    private readonly store: Store,
    private readonly tenancy: TenancyService,
    private readonly messaging: MessagingService,
    private readonly voice: VoiceService,
    private readonly codes: OtpCodes,
    private readonly publicBase: () => string,
    private readonly options: OtpOptions,
    private readonly logger: Logger,
    private readonly events: OtpEvents = {},
  ) {
    this.timers = new LeasedQueue(store, OTP_TIMER_QUEUE);
    this.rules = { cooldownMs: options.cooldownSeconds * 1000, maxPerHour: options.sendsPerHour };
  }

  private get db(): Db {
    return this.store.db;
  }

  private checkRequest(input: OtpRequest, defaultCountry: Parameters<typeof normaliseRecipient>[2]): CheckedRequest {
    const recipient = normaliseRecipient(input.to, 'recipient.to', defaultCountry);
    const channel = oneOf(input.channel, OTP_CHANNELS, 'SMS', 'channel');
    const locale = oneOf(input.locale, OTP_LOCALES, DEFAULT_OTP_LOCALE, 'locale');
    const alphabet = oneOf(input.alphabet, Object.keys(OTP_ALPHABETS) as OtpAlphabet[], 'NUMERIC', 'alphabet');
    const template = input.template ?? DEFAULT_TEMPLATES[locale];
    const problem = templateProblem(template);
    if (problem) fail('INVALID_REQUEST', problem, 'template');
    const codeLength = inRange(input.codeLength, OTP_LIMITS.codeLength, OTP_LIMITS.codeLength.default, 'codeLength');
    if (input.fallbackAfterSeconds !== undefined && channel !== 'SMS')
      fail('INVALID_REQUEST', 'a call is a fallback of a text message only (channel SMS)', 'fallbackAfterSeconds');
    const fallbackAfterMs =
      input.fallbackAfterSeconds === undefined ? null : inRange(input.fallbackAfterSeconds, OTP_LIMITS.fallbackAfterSeconds, 0, 'fallbackAfterSeconds') * 1000;
    const ttlMs = inRange(input.ttlSeconds, OTP_LIMITS.ttlSeconds, OTP_LIMITS.ttlSeconds.default, 'ttlSeconds') * 1000;
    if (fallbackAfterMs !== null && fallbackAfterMs >= ttlMs)
      fail('INVALID_REQUEST', 'must be shorter than ttlSeconds: the call would come after the code ended', 'fallbackAfterSeconds');
    if (channel === 'VOICE' || fallbackAfterMs !== null) {
      const said = spokenText(template, 'X'.repeat(codeLength));
      if (said.length > MAX_VOICE_TEXT_LENGTH) {
        fail('INVALID_REQUEST', `read out with its code, a call says ${said.length} characters; at most ${MAX_VOICE_TEXT_LENGTH}`, 'template');
      }
    }
    return {
      recipient,
      channel,
      codeLength,
      alphabet,
      ttlMs,
      template,
      locale,
      refClient: checkRefClient(input.refClient),
      maxAttempts: inRange(input.maxAttempts, OTP_LIMITS.maxAttempts, OTP_LIMITS.maxAttempts.default, 'maxAttempts'),
      fallbackAfterMs,
    };
  }

  /** The organisation's VOICE channel calls go through (its oldest active one). */
  private async voiceChannelOf(organisationId: string): Promise<Channel | null> {
    return (await this.tenancy.listChannels([organisationId])).find((c) => c.type === 'VOICE' && c.state === 'ACTIVE') ?? null;
  }

  private requireKey(): void {
    if (!this.codes.available) fail('UNAVAILABLE', 'TERN_SECRET_KEY is not set: one-time passwords need it; set it (32+ characters) and restart');
  }

  /**
   * Sends a code to a number through `channel` (the key's SMS channel). With a code still pending for the number it
   * is sent again (the same code unless configured otherwise), refused inside the cooldown or past the hourly number
   * (RATE_LIMITED, with when to try again). A message the accept refuses (no credit, a fraud guard) ends the code
   * CANCELLED with the refusal as its detail.
   */
  async request(channel: Channel, input: OtpRequest, now = Date.now()): Promise<OtpRow> {
    this.requireKey();
    if (channel.type !== 'SMS') fail('CHANNEL_TYPE_MISMATCH', `one-time passwords are asked for with an SMS channel's key, not ${channel.type}`);
    const locale = await this.tenancy.locale(channel.organisationId, now);
    const r = this.checkRequest(input, locale.defaultCountry);
    let voiceChannel: Channel | null = null;
    if (r.channel === 'VOICE' || r.fallbackAfterMs !== null) {
      voiceChannel = await this.voiceChannelOf(channel.organisationId);
      if (!voiceChannel) fail('CONFLICT', 'the organisation has no VOICE channel to call through', r.channel === 'VOICE' ? 'channel' : 'fallbackAfterSeconds');
    }
    // Checked again under the number's lock when the message is stored; this spares a refused request its message.
    const pending = await this.livePending(this.db, channel.organisationId, r.recipient, now);
    const allowed = decideSend(
      pending?.last_sent_at ?? null,
      await sendTimesSince(this.db, channel.organisationId, r.recipient, now - HOUR_MS),
      this.rules,
      now,
    );
    if (!allowed.ok) throw new RateLimitedError(`recipient.to: ${allowed.reason}`, allowed.retryAt);

    const keep = pending !== null;
    const send: Send = {
      kind: keep ? 'RESEND' : 'NEW',
      otpId: pending?.id ?? uuidv7(now),
      via: r.channel,
      channel: r.channel === 'VOICE' ? voiceChannel! : channel,
      ownerChannelId: pending?.channel_id ?? channel.id,
      organisationId: channel.organisationId,
      recipient: r.recipient,
      salt: keep && this.options.reuseCode ? pending.code_salt : this.codes.newSalt(),
      codeLength: keep ? pending.code_length : r.codeLength,
      alphabet: keep ? (pending.alphabet as OtpAlphabet) : r.alphabet,
      template: r.template,
      locale: r.locale,
      refClient: r.refClient ?? pending?.ref_client ?? null,
      maxAttempts: keep ? pending.max_attempts : r.maxAttempts,
      ttlMs: r.ttlMs,
      fallbackAfterMs: r.fallbackAfterMs,
      source: 'REST',
      now,
    };
    await this.sendCode(send);
    return (await findOtp(this.db, send.otpId))!;
  }

  /** The code pending for a number, if one is and its time has not run out. */
  private async livePending(db: Db, organisationId: string, recipient: string, now: number): Promise<OtpRow | null> {
    return (await pendingOtps(db, organisationId, recipient)).find((o) => now < o.expires_at) ?? null;
  }

  /** Prepares the message of a send (its text masked, `body.masked`) and stores it with the code's new state. */
  private async sendCode(s: Send): Promise<MessageRow> {
    const code = this.codes.code(s.salt, s.codeLength, OTP_ALPHABETS[s.alphabet]);
    const shown = maskedText(s.template, s.codeLength);
    const extra = { otpId: s.otpId };
    const afterInsert: PreparedMessage['afterInsert'] = (db, row) => this.record(db, row, s, code);
    let row: MessageRow;
    if (s.via === 'VOICE') {
      row = await this.voice.send(
        s.channel,
        { to: s.recipient, text: spokenText(s.template, code), maskedText: shown, language: s.locale, refClient: s.refClient, source: s.source, extra },
        afterInsert,
      );
    } else {
      const prepared = await prepareSms(
        s.channel,
        { to: s.recipient, text: shown, refClient: s.refClient, source: s.source, extra },
        await this.messaging.prepareContext(s.channel, s.now),
      );
      prepared.row.body = JSON.stringify({ ...(JSON.parse(prepared.row.body) as Record<string, unknown>), masked: true });
      prepared.afterInsert = afterInsert;
      row = await this.messaging.accept(prepared);
    }
    if (row.status === 'UNDELIVERABLE') this.events.settled?.('CANCELLED');
    else this.events.sent?.(s.via);
    return row;
  }

  /**
   * In the transaction that stores a send's message: under the number's lock, the send is checked again (another node
   * may have sent meanwhile) and the code's state written — created, sent again, or CANCELLED when the message was
   * refused.
   */
  private async record(db: Db, row: MessageRow, s: Send, code: string): Promise<void> {
    const now = s.now;
    await lockRecipient(db, this.store.dialect, s.organisationId, s.recipient, now);
    for (const stale of await pendingOtps(db, s.organisationId, s.recipient)) {
      if (now >= stale.expires_at) await this.expireIn(db, stale, now);
    }
    const live = await this.livePending(db, s.organisationId, s.recipient, now);
    if (s.kind !== 'FALLBACK') {
      const allowed = decideSend(live?.last_sent_at ?? null, await sendTimesSince(db, s.organisationId, s.recipient, now - HOUR_MS), this.rules, now);
      if (!allowed.ok) throw new RateLimitedError(`recipient.to: ${allowed.reason}`, allowed.retryAt);
    }
    if (s.kind === 'NEW' ? live !== null : live?.id !== s.otpId) {
      throw new CoreError('CONFLICT', 'the code of this number changed while this one was being sent; ask again', 'recipient.to');
    }
    const refused = row.status === 'UNDELIVERABLE';
    const status: OtpStatus = refused ? 'CANCELLED' : 'PENDING';
    const expiresAt = s.kind === 'FALLBACK' ? live!.expires_at : now + s.ttlMs;
    const fallbackAt = !refused && s.via === 'SMS' && s.fallbackAfterMs !== null ? now + s.fallbackAfterMs : null;
    const dueAt = refused ? null : (fallbackAt ?? expiresAt);
    const state = {
      status,
      detail: refused ? row.status_detail : null,
      settled_at: refused ? now : null,
      code_salt: s.salt,
      code_hash: this.codes.hash(s.otpId, code),
      template: s.template,
      locale: s.locale,
      ref_client: s.refClient,
      last_message_id: row.id,
      last_channel: s.via,
      last_sent_at: now,
      expires_at: expiresAt,
      fallback_at: fallbackAt,
      due_at: dueAt,
      lease_until: null,
    };
    if (s.kind === 'NEW') {
      await insertOtp(db, {
        id: s.otpId,
        organisation_id: s.organisationId,
        channel_id: s.ownerChannelId,
        recipient: s.recipient,
        code_length: s.codeLength,
        alphabet: s.alphabet,
        max_attempts: s.maxAttempts,
        attempts: 0,
        sends: 1,
        created_at: now,
        ...state,
      });
    } else {
      await updateOtp(db, s.otpId, { ...state, sends: live!.sends + 1 });
    }
    await insertOtpSend(db, {
      message_id: row.id,
      otp_id: s.otpId,
      organisation_id: s.organisationId,
      recipient: s.recipient,
      channel: s.via,
      template: s.template,
      sent_at: now,
    });
    if (dueAt !== null) await this.timers.wake(db);
  }

  /** Ends a pending code by time, in the caller's transaction, with its `otp.expired` webhook. */
  private async expireIn(db: Db, o: OtpRow, now: number): Promise<OtpRow> {
    const after: OtpRow = { ...o, status: 'EXPIRED', settled_at: now, due_at: null, lease_until: null, fallback_at: null };
    await updateOtp(db, o.id, { status: after.status, settled_at: now, due_at: null, lease_until: null, fallback_at: null });
    await this.webhook(db, after, 'otp.expired', now);
    this.events.settled?.('EXPIRED');
    return after;
  }

  /** `otp.approved` / `otp.expired` on the status URL of the code's channel, when it has one. */
  private async webhook(db: Db, o: OtpRow, event: string, now: number): Promise<void> {
    const channel = await this.messaging.channel(o.channel_id, db);
    const url = channel.defaultCallbackUrlStatus;
    if (!url) return;
    await writeEventWebhook(this.store, db, {
      kind: 'OTP',
      event,
      messageId: o.last_message_id,
      organisationId: o.organisation_id,
      channelId: o.channel_id,
      url,
      at: now,
      body: { otp: otpObject(o, this.publicBase(), now) },
    });
  }

  /** A code of these channels; NOT_FOUND otherwise. */
  async get(id: string, channelIds: string[]): Promise<OtpRow> {
    const o = await findOtp(this.db, id);
    if (!o || !channelIds.includes(o.channel_id)) fail('NOT_FOUND', `one-time password ${id} not found`);
    return o;
  }

  /**
   * Checks a typed code (compared in constant time). Each check of a pending code counts; the last allowed wrong one
   * cancels it; an approved code answers CONFLICT, an expired or cancelled one its status, and neither approves.
   */
  async check(id: string, channelIds: string[], typed: string, now = Date.now()): Promise<OtpRow> {
    this.requireKey();
    if (normaliseCode(typed) === '') fail('INVALID_REQUEST', 'is required', 'code');
    const { otp, result } = await inTransaction(this.store, async (trx) => {
      const o = await lockOtp(trx, this.store.dialect, id);
      if (!o || !channelIds.includes(o.channel_id)) fail('NOT_FOUND', `one-time password ${id} not found`);
      if (o.status === 'APPROVED') fail('CONFLICT', `one-time password ${id} was approved already; a code approves once`);
      const matches = this.codes.matches(o.id, typed, o.code_hash);
      const outcome = decideCheck({ status: o.status as OtpStatus, attempts: o.attempts, maxAttempts: o.max_attempts, expiresAt: o.expires_at }, matches, now);
      switch (outcome.kind) {
        case 'SETTLED':
          return { otp: o, result: 'NOT_PENDING' as const };
        case 'EXPIRED':
          return { otp: await this.expireIn(trx, o, now), result: 'EXPIRED' as const };
        case 'APPROVED': {
          const after: OtpRow = { ...o, status: 'APPROVED', attempts: outcome.attempts, settled_at: now, due_at: null, lease_until: null, fallback_at: null };
          await updateOtp(trx, o.id, { status: after.status, attempts: after.attempts, settled_at: now, due_at: null, lease_until: null, fallback_at: null });
          await this.webhook(trx, after, 'otp.approved', now);
          return { otp: after, result: 'APPROVED' as const };
        }
        case 'WRONG': {
          const cancelled = outcome.status === 'CANCELLED';
          const after: OtpRow = {
            ...o,
            attempts: outcome.attempts,
            status: outcome.status,
            ...(cancelled && { detail: 'MAX_ATTEMPTS', settled_at: now, due_at: null, lease_until: null, fallback_at: null }),
          };
          await updateOtp(trx, o.id, {
            attempts: after.attempts,
            status: after.status,
            detail: after.detail,
            settled_at: after.settled_at,
            due_at: after.due_at,
            lease_until: after.lease_until,
            fallback_at: after.fallback_at,
          });
          return { otp: after, result: cancelled ? ('CANCELLED' as const) : ('WRONG_CODE' as const) };
        }
      }
    });
    this.events.checked?.(result);
    if (result === 'APPROVED') this.events.settled?.('APPROVED');
    if (result === 'CANCELLED') this.events.settled?.('CANCELLED');
    return otp;
  }

  /** Cancels a pending code (it no longer approves); anything else is a conflict. */
  async cancel(id: string, channelIds: string[], now = Date.now()): Promise<OtpRow> {
    const otp = await inTransaction(this.store, async (trx) => {
      const o = await lockOtp(trx, this.store.dialect, id);
      if (!o || !channelIds.includes(o.channel_id)) fail('NOT_FOUND', `one-time password ${id} not found`);
      const status = statusAt({ status: o.status as OtpStatus, expiresAt: o.expires_at }, now);
      if (status !== 'PENDING') fail('CONFLICT', `one-time password ${id} is ${status}; only a PENDING one can be cancelled`);
      const after: OtpRow = { ...o, status: 'CANCELLED', detail: 'CANCELLED_BY_USER', settled_at: now, due_at: null, lease_until: null, fallback_at: null };
      await updateOtp(trx, id, { status: after.status, detail: after.detail, settled_at: now, due_at: null, lease_until: null, fallback_at: null });
      return after;
    });
    this.events.settled?.('CANCELLED');
    return otp;
  }

  /**
   * The messages a connector is about to submit, with the real text of those that carry a code (`body.masked`):
   * the template with the code (read out character by character for a call), rebuilt from the code's salt.
   */
  async reveal(batch: OutboundMessage[]): Promise<OutboundMessage[]> {
    const masked = batch.filter((m) => m.body.masked === true);
    if (masked.length === 0) return batch;
    const secrets = new Map(
      (
        await sendSecrets(
          this.db,
          masked.map((m) => m.id),
        )
      ).map((s) => [s.message_id, s]),
    );
    return batch.map((m) => {
      const s = m.body.masked === true ? secrets.get(m.id) : undefined;
      if (!s) return m;
      const code = this.codes.code(s.code_salt, s.code_length, OTP_ALPHABETS[s.alphabet as OtpAlphabet]);
      const { masked: _, ...body } = m.body;
      return { ...m, body: { ...body, text: s.channel === 'VOICE' ? spokenText(s.template, code) : renderTemplate(s.template, code) } };
    });
  }

  /**
   * The timers that fell due, claimed for this node: a call for a text message not delivered in time, then the end
   * of the code. Answers when to look again.
   */
  async pass(now: number): Promise<number | null> {
    const claimed = await this.timers.claim({ now, limit: TIMER_BATCH, leaseMs: TIMER_LEASE_MS });
    for (const o of claimed) {
      try {
        if (now >= o.expires_at) await this.expire(o.id, now);
        else if (o.fallback_at !== null && now >= o.fallback_at) await this.fallback(o, now);
        else await updateOtp(this.db, o.id, { due_at: o.fallback_at ?? o.expires_at, lease_until: null });
      } catch (err) {
        // Its lease runs out and it is tried again.
        this.logger.warn({ err, otpId: o.id }, 'a one-time password timer failed');
      }
    }
    return claimed.length >= TIMER_BATCH ? Date.now() : this.timers.nextDue(Date.now());
  }

  private async expire(id: string, now: number): Promise<void> {
    await inTransaction(this.store, async (trx) => {
      const o = await lockOtp(trx, this.store.dialect, id);
      if (o && o.status === 'PENDING' && now >= o.expires_at) await this.expireIn(trx, o, now);
    });
  }

  /** The text message was not delivered in time: the code is read out by a call, once. */
  private async fallback(o: OtpRow, now: number): Promise<void> {
    const [sms] = await this.messaging.getMany([o.last_message_id]);
    const reached = sms !== undefined && (sms.status === 'DELIVERED' || sms.status === 'READ');
    const voiceChannel = reached ? null : await this.voiceChannelOf(o.organisation_id);
    const done = () => clearFallback(this.db, o.id, o.expires_at);
    if (reached || o.last_channel !== 'SMS') return done();
    if (!voiceChannel) {
      this.logger.warn({ otpId: o.id, organisationId: o.organisation_id }, 'no VOICE channel left to call through: the code is not read out');
      return done();
    }
    try {
      await this.sendCode({
        kind: 'FALLBACK',
        otpId: o.id,
        via: 'VOICE',
        channel: voiceChannel,
        ownerChannelId: o.channel_id,
        organisationId: o.organisation_id,
        recipient: o.recipient,
        salt: o.code_salt,
        codeLength: o.code_length,
        alphabet: o.alphabet as OtpAlphabet,
        template: o.template,
        locale: o.locale as OtpLocale,
        refClient: o.ref_client,
        maxAttempts: o.max_attempts,
        ttlMs: o.expires_at - now,
        fallbackAfterMs: null,
        source: 'FALLBACK',
        now,
      });
    } catch (err) {
      if (!(err instanceof CoreError)) throw err;
      // The code was settled meanwhile, or the call cannot be made (text-to-speech unavailable): no call.
      this.logger.warn({ err, otpId: o.id }, 'the code could not be read out by a call');
      await done();
    }
  }

  /** Codes created in the last 24 hours, and how many were approved (the whole cluster's). */
  conversion(now = Date.now()): Promise<{ created: number; approved: number }> {
    return conversionSince(this.db, now - CONVERSION_WINDOW_MS);
  }

  /** Forgets settled codes and sends older than `keepMs` (a pruning task), in small batches. */
  prune(now: number, keepMs: number): Promise<number> {
    return pruneOtps(this.db, now - keepMs, 1_000);
  }

  /** The object of a code, as answers and webhooks show it. */
  view(o: OtpRow, base: string, now = Date.now()) {
    return otpObject(o, base, now);
  }
}
