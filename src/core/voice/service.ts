import type { Logger } from 'pino';
import { voiceBillingUnits } from '../../domain/delivery.ts';
import { uuidv7 } from '../../domain/ids.ts';
import type { RequestedDate } from '../../domain/dates.ts';
import { type CountryCode, describeNumber } from '../../domain/phone.ts';
import { networkLookup } from '../lookup/enrich.ts';
import { insertCampaign } from '../../store/campaigns.ts';
import type { Channel } from '../../store/channels.ts';
import type { Store } from '../../store/db.ts';
import type { MessageRow } from '../../store/messages.ts';
import { findVoiceAudio, insertVoiceAudio, type VoiceAudio } from '../../store/voice-audio.ts';
import {
  DEFAULT_VOICE_LANGUAGE,
  isVoiceLanguage,
  type RenderedSpeech,
  type TextToSpeech,
  type TtsAvailability,
  TtsError,
  VOICE_LANGUAGES,
  type VoiceLanguage,
} from './tts.ts';
import { fail } from '../errors.ts';
import { readAloud } from './reading.ts';
import type { PreparedMessage } from '../messaging/accept.ts';
import { outboundMessageRow } from '../messaging/message-row.ts';
import type { MessagingService } from '../messaging/service.ts';
import {
  checkCallbackUrl,
  checkRefClient,
  type MessageSource,
  normaliseRecipient,
  type PrepareContext,
  resolveSendAt,
  resolveSender,
} from '../messaging/prepare.ts';

export const MAX_VOICE_TEXT_LENGTH = 160;
export const MAX_VOICE_TITLE_LENGTH = 160;
export const MAX_VOICE_GROUP_RECIPIENTS = 10_000;

/** Spoken before the message when the sender gives no title. */
export const DEFAULT_VOICE_TITLES: Readonly<Record<VoiceLanguage, string>> = {
  'fr-FR': 'Bonjour, voici un message vocal.',
  'en-GB': 'Hello, here is a voice message.',
  'de-DE': 'Guten Tag, hier ist eine Sprachnachricht.',
  'es-ES': 'Hola, este es un mensaje de voz.',
  'it-IT': 'Buongiorno, ecco un messaggio vocale.',
  'pt-PT': 'Olá, esta é uma mensagem de voz.',
  'nl-NL': 'Goedendag, dit is een spraakbericht.',
};

export interface VoiceSendInput {
  to: string;
  text: string;
  /** Spoken first; the language's default title when absent. */
  title?: string | null;
  language?: string | null;
  from?: string | null;
  refClient?: string | null;
  /** Longest refClient accepted (legacy: 40). */
  refClientMax?: number;
  /** A local date and time is read in the organisation's time zone. */
  sentDate?: RequestedDate | null;
  callbackUrlStatus?: string | null;
  campaignId?: string | null;
  source: MessageSource;
  /** Read national numbers in this country rather than the organisation's `defaultCountry`. */
  defaultCountry?: CountryCode;
  /** Extra fields of the message object. */
  extra?: Record<string, unknown>;
  /**
   * What the message shows instead of `text`, which is then only spoken (a one-time password's code hidden): its
   * body says `masked: true`, and connectors are given the spoken text.
   */
  maskedText?: string;
}

// An answered call listened to in full is billed on its recording's length at accept (see domain/delivery.ts).
export { VOICE_BILLING_BLOCK_MS, voiceBillingUnits } from '../../domain/delivery.ts';

/** What the call says: the title, then the message, with a pause between them. */
export function spokenText(title: string, text: string): string {
  const t = title.trim();
  return /[.!?…:;]$/.test(t) ? `${t}\n${text.trim()}` : `${t}.\n${text.trim()}`;
}

interface CheckedVoice {
  text: string;
  title: string;
  language: VoiceLanguage;
}

/**
 * Text-to-speech voice messages: validates, renders the speech (before the accept, so the price is known: an
 * answered call listened to in full lasts the audio's duration), prices per started 30 s from the VOICE price list,
 * and hands the message to the one accept pipeline with its WAV stored in the same transaction. A call that never
 * reached the person (busy or unanswered after its attempts, invalid number) is refunded.
 */
export class VoiceService {
  private availability: TtsAvailability | null = null;
  private checking: Promise<TtsAvailability> | null = null;

  constructor(
    private readonly store: Store,
    private readonly messaging: MessagingService,
    private readonly tts: TextToSpeech,
    private readonly logger: Logger,
  ) {}

  /** Checks the synthesiser now when its engine is checked as the node starts; otherwise the first voice send does. */
  checkAtStart(): void {
    if (this.tts.checkAtStart) void this.checkAvailability();
  }

  /**
   * Checks that the synthesiser can speak every supported language; logs a warning naming the problem if not.
   * Voice sends made while the check runs wait for it.
   */
  checkAvailability(check: () => Promise<TtsAvailability> = () => this.tts.availability()): Promise<TtsAvailability> {
    const checking = this.runCheck(check);
    this.checking = checking;
    void checking.finally(() => {
      if (this.checking === checking) this.checking = null;
    });
    return checking;
  }

  private async runCheck(check: () => Promise<TtsAvailability>): Promise<TtsAvailability> {
    let availability: TtsAvailability;
    try {
      availability = await check();
    } catch (err) {
      availability = { ok: false, reason: (err as Error).message };
    }
    this.availability = availability;
    if (this.availability.ok) {
      this.logger.info({ engine: this.tts.name, version: this.availability.version }, `text-to-speech ready (${this.tts.name})`);
    } else {
      this.logger.warn({ reason: this.availability.reason }, `text-to-speech unavailable, voice messages will be refused: ${this.availability.reason}`);
    }
    return this.availability;
  }

  get ttsAvailability(): TtsAvailability | null {
    return this.availability;
  }

  /** Waits for a check under way, then releases the synthesiser (its worker threads). */
  async close(): Promise<void> {
    await this.checking?.catch(() => undefined);
    await this.tts.close();
  }

  private check(input: VoiceSendInput): CheckedVoice {
    if (typeof input.text !== 'string' || input.text.trim() === '') fail('INVALID_REQUEST', 'is required', 'body.text');
    if (input.text.length > MAX_VOICE_TEXT_LENGTH) {
      fail('INVALID_REQUEST', `at most ${MAX_VOICE_TEXT_LENGTH} characters, got ${input.text.length}`, 'body.text');
    }
    const language = input.language === undefined || input.language === null || input.language === '' ? DEFAULT_VOICE_LANGUAGE : input.language;
    if (!isVoiceLanguage(language)) fail('INVALID_REQUEST', `must be one of ${VOICE_LANGUAGES.join(', ')}`, 'body.language');
    const given = input.title ?? '';
    if (given.length > MAX_VOICE_TITLE_LENGTH) fail('INVALID_REQUEST', `at most ${MAX_VOICE_TITLE_LENGTH} characters`, 'body.title');
    const title = given.trim() === '' ? DEFAULT_VOICE_TITLES[language] : given.trim();
    return { text: input.text, title, language };
  }

  /** Renders the speech; an unusable synthesiser is 503 (`UNAVAILABLE`), naming the problem. */
  private async render(v: CheckedVoice): Promise<RenderedSpeech> {
    if (this.availability === null && this.checking === null) void this.checkAvailability();
    if (this.checking) await this.checking;
    if (this.availability && !this.availability.ok) {
      fail('UNAVAILABLE', `text-to-speech is unavailable: ${this.availability.reason}`);
    }
    try {
      return await this.tts.render(readAloud(spokenText(v.title, v.text), v.language), v.language);
    } catch (err) {
      if (err instanceof TtsError) {
        this.logger.error({ err }, 'text-to-speech failed');
        fail('UNAVAILABLE', `text-to-speech failed: ${err.message}`);
      }
      throw err;
    }
  }

  private prepare(
    channel: Channel,
    input: VoiceSendInput,
    v: CheckedVoice,
    speech: RenderedSpeech,
    ctx: PrepareContext,
    network: { mccMnc: string | null; network: string | null } | null = null,
    toField = 'recipient.to',
  ): PreparedMessage {
    const recipient = normaliseRecipient(input.to, toField, input.defaultCountry ?? ctx.locale.defaultCountry);
    const sender = resolveSender(channel, input.from);
    const refClient = checkRefClient(input.refClient, 'refClient', input.refClientMax);
    const callbackUrlStatus = checkCallbackUrl(input.callbackUrlStatus, 'callbackUrlStatus');
    const now = ctx.now;
    const sendAt = resolveSendAt(input.sentDate, now, ctx.locale.timeZone);
    const number = describeNumber(recipient);
    const units = voiceBillingUnits(speech.durationMs);
    const unit = ctx.priceList.unitPrice('VOICE', number.isoCountryCode, 'VOICE') ?? 0;
    const price = number.valid ? unit * units : 0;
    const id = uuidv7(now);
    const audio: VoiceAudio = { messageId: id, wav: speech.wav, durationMs: speech.durationMs };
    return {
      channel,
      price,
      units,
      rejection: number.valid ? null : 'INVALID_PHONE_NUMBER',
      checkBlacklist: channel.flow === 'MARKETING',
      afterInsert: (db) => insertVoiceAudio(db, audio, now),
      row: outboundMessageRow({
        id,
        channel,
        type: 'VOICE',
        recipient,
        sender,
        body:
          input.maskedText === undefined
            ? { text: v.text, title: v.title, language: v.language }
            : { text: input.maskedText, title: v.title, language: v.language, masked: true },
        units,
        length: v.text.length,
        price,
        priceKind: 'VOICE',
        refClient,
        callbackUrlStatus,
        callbackUrlMo: null,
        now,
        sendAt,
        validityUntil: sendAt + ctx.validitySeconds * 1000,
        country: number.isoCountryCode,
        network: network ?? null,
        source: input.source,
        campaignId: input.campaignId,
        // The audio's duration in seconds: how long an answered call listened to in full lasts.
        extra: { ...input.extra, duration: speech.durationMs / 1000 },
      }),
    };
  }

  /** One voice message: validated, rendered, priced and accepted (durable when this resolves). */
  async send(channel: Channel, input: VoiceSendInput, afterInsert?: PreparedMessage['afterInsert']): Promise<MessageRow> {
    if (channel.type !== 'VOICE') fail('CHANNEL_TYPE_MISMATCH', `voice messages go through a VOICE channel, not ${channel.type}`);
    const v = this.check(input);
    const ctx = await this.messaging.prepareContext(channel);
    // Request errors first: a bad number or date must not cost a rendering.
    this.prepare(channel, input, v, { wav: Buffer.alloc(0), durationMs: 0 }, ctx);
    const speech = await this.render(v);
    const prepared = this.prepare(channel, input, v, speech, await this.messaging.prepareContext(channel), await this.network(input, ctx));
    if (afterInsert) {
      const storeAudio = prepared.afterInsert!;
      prepared.afterInsert = async (db, row) => {
        await storeAudio(db, row);
        await afterInsert(db, row);
      };
    }
    return this.messaging.accept(prepared);
  }

  /**
   * The same voice message to several numbers (legacy sends): one rendering, one campaign grouping the messages,
   * each message validated, billed and tracked on its own. Any bad number fails the whole request.
   */
  async sendGroup(
    channel: Channel,
    recipients: string[],
    input: Omit<VoiceSendInput, 'to' | 'campaignId'>,
  ): Promise<{ campaignId: string; messages: MessageRow[] }> {
    if (channel.type !== 'VOICE') fail('CHANNEL_TYPE_MISMATCH', `voice messages go through a VOICE channel, not ${channel.type}`);
    if (recipients.length === 0) fail('INVALID_REQUEST', 'at least one recipient is required', 'recipients');
    if (recipients.length > MAX_VOICE_GROUP_RECIPIENTS) {
      fail('INVALID_REQUEST', `at most ${MAX_VOICE_GROUP_RECIPIENTS} recipients per request`, 'recipients');
    }
    const v = this.check({ ...input, to: '' });
    const probe = await this.messaging.prepareContext(channel);
    recipients.forEach((to, i) => this.prepare(channel, { ...input, to }, v, { wav: Buffer.alloc(0), durationMs: 0 }, probe, null, `recipients[${i}].to`));
    const speech = await this.render(v);
    const ctx = await this.messaging.prepareContext(channel);
    const campaignId = uuidv7(ctx.now);
    const prepared: PreparedMessage[] = [];
    for (const to of recipients) {
      const one = { ...input, to, campaignId };
      prepared.push(this.prepare(channel, one, v, speech, ctx, await this.network(one, ctx)));
    }
    await insertCampaign(this.store.db, {
      id: campaignId,
      organisation_id: channel.organisationId,
      channel_id: channel.id,
      ref_client: prepared[0]!.row.ref_client,
      send_at: prepared[0]!.row.send_at,
      created_at: ctx.now,
      recipients: recipients.length,
      body: JSON.stringify({ text: v.text, title: v.title, language: v.language }),
    });
    const messages = await Promise.all(prepared.map((p) => this.messaging.accept(p)));
    return { campaignId, messages };
  }

  /** The destination's network (as for SMS), for the consumption breakdown and the callbacks' mcc_mnc. */
  private async network(input: VoiceSendInput, ctx: PrepareContext) {
    const recipient = normaliseRecipient(input.to, 'recipient.to', input.defaultCountry ?? ctx.locale.defaultCountry);
    return describeNumber(recipient).valid ? networkLookup(recipient) : null;
  }

  /** The recording a call plays, for the connector placing it; null when the message has none (any more). */
  async callAudio(messageId: string): Promise<VoiceAudio | null> {
    return findVoiceAudio(this.store.db, messageId);
  }

  /** The WAV a voice message plays; 404 when the message is not one of these channels' voice messages. */
  async audio(messageId: string, channelIds: string[]): Promise<{ message: MessageRow; audio: VoiceAudio }> {
    const message = await this.messaging.get(messageId, channelIds, 'VOICE');
    if ((JSON.parse(message.body) as { masked?: unknown }).masked === true) {
      fail('NOT_FOUND', `message ${messageId} reads out a one-time password: its audio is only played to the person called`);
    }
    const audio = await findVoiceAudio(this.store.db, messageId);
    if (!audio) fail('NOT_FOUND', `message ${messageId} has no audio`);
    return { message, audio };
  }
}
