/**
 * One-time passwords: how a code is drawn, written into its message, hidden from every view, checked, and how often
 * one may be sent to a number. Pure rules; the use case (src/core/otp) stores and sends.
 */

export const OTP_STATUSES = ['PENDING', 'APPROVED', 'EXPIRED', 'CANCELLED'] as const;
export type OtpStatus = (typeof OTP_STATUSES)[number];

/** How a code reaches the person: a text message, or a call that reads it out. */
export const OTP_CHANNELS = ['SMS', 'VOICE'] as const;
export type OtpChannel = (typeof OTP_CHANNELS)[number];

/**
 * The characters of a code. ALPHANUMERIC leaves out the ones people mistake for each other (0/O, 1/I/L), so a code
 * read aloud or copied by hand is typed back right; codes are compared in upper case.
 */
export const OTP_ALPHABETS = {
  NUMERIC: '0123456789',
  ALPHANUMERIC: '23456789ABCDEFGHJKMNPQRSTUVWXYZ',
} as const;
export type OtpAlphabet = keyof typeof OTP_ALPHABETS;

/** Languages of the default template and of a call (the text-to-speech languages). */
export const OTP_LOCALES = ['en-GB', 'fr-FR', 'de-DE', 'es-ES', 'it-IT', 'pt-PT', 'nl-NL'] as const;
export type OtpLocale = (typeof OTP_LOCALES)[number];
export const DEFAULT_OTP_LOCALE: OtpLocale = 'en-GB';

export const CODE_PLACEHOLDER = '{code}';
/** What stands for each character of the code wherever the message is shown. */
export const MASK_CHARACTER = '*';

export const OTP_LIMITS = {
  codeLength: { min: 4, max: 10, default: 6 },
  ttlSeconds: { min: 30, max: 3_600, default: 300 },
  maxAttempts: { min: 1, max: 20, default: 5 },
  fallbackAfterSeconds: { min: 5, max: 3_600 },
  /** 480 characters stay within 10 parts even in UCS-2. */
  templateLength: 480,
} as const;

export const DEFAULT_TEMPLATES: Readonly<Record<OtpLocale, string>> = {
  'en-GB': 'Your code is {code}',
  'fr-FR': 'Votre code est {code}',
  'de-DE': 'Ihr Code lautet {code}',
  'es-ES': 'Su código es {code}',
  'it-IT': 'Il tuo codice è {code}',
  'pt-PT': 'O seu código é {code}',
  'nl-NL': 'Uw code is {code}',
};

/**
 * A code of `length` characters of `alphabet`, drawn from a stream of random bytes without bias: a byte is used only
 * when it falls below the largest multiple of the alphabet's size, so every character is equally likely.
 */
export function codeFromBytes(nextByte: () => number, length: number, alphabet: string): string {
  const n = alphabet.length;
  const limit = 256 - (256 % n);
  let code = '';
  while (code.length < length) {
    const b = nextByte();
    if (b < limit) code += alphabet[b % n];
  }
  return code;
}

/** A code as a person typed it: spaces and dashes dropped, letters in upper case. */
export function normaliseCode(typed: string): string {
  return typed.replace(/[\s-]/g, '').toUpperCase();
}

/** Why a template cannot be used, or null. */
export function templateProblem(template: string): string | null {
  if (template.trim() === '') return 'must not be empty';
  if (template.length > OTP_LIMITS.templateLength) return `at most ${OTP_LIMITS.templateLength} characters`;
  if (!template.includes(CODE_PLACEHOLDER)) return `must contain ${CODE_PLACEHOLDER}, where the code goes`;
  return null;
}

/** The template with the code in place of every `{code}`. */
export function renderTemplate(template: string, code: string): string {
  return template.split(CODE_PLACEHOLDER).join(code);
}

/** The text as every view shows it: one `*` for each character of the code. */
export function maskedText(template: string, codeLength: number): string {
  return renderTemplate(template, MASK_CHARACTER.repeat(codeLength));
}

/** The code as a call reads it: character by character (`1, 2, 3, 4`), never as one number. */
export function spokenCode(code: string): string {
  return [...code].join(', ');
}

/** What a call says in place of `{code}`: the spoken code. */
export function spokenText(template: string, code: string): string {
  return renderTemplate(template, spokenCode(code));
}

export interface OtpState {
  status: OtpStatus;
  attempts: number;
  maxAttempts: number;
  expiresAt: number;
}

/** A stored status as it stands at `now`: a pending code past its end is expired, whether or not that was written. */
export function statusAt(o: Pick<OtpState, 'status' | 'expiresAt'>, now: number): OtpStatus {
  return o.status === 'PENDING' && now >= o.expiresAt ? 'EXPIRED' : o.status;
}

export type CheckOutcome =
  /** Nothing changes: the code is settled (the status says how). */
  | { kind: 'SETTLED'; status: OtpStatus }
  /** The code ended by time before this check; nothing counted. */
  | { kind: 'EXPIRED' }
  | { kind: 'APPROVED'; attempts: number }
  /** A wrong code; the last allowed one cancels the code. */
  | { kind: 'WRONG'; attempts: number; status: 'PENDING' | 'CANCELLED' };

/**
 * What one check does. Every check of a pending code counts as an attempt; the one that uses up `maxAttempts` with a
 * wrong code cancels it. An approved, expired or cancelled code never approves again.
 */
export function decideCheck(o: OtpState, matches: boolean, now: number): CheckOutcome {
  if (o.status !== 'PENDING') return { kind: 'SETTLED', status: o.status };
  if (now >= o.expiresAt) return { kind: 'EXPIRED' };
  const attempts = o.attempts + 1;
  if (matches) return { kind: 'APPROVED', attempts };
  return { kind: 'WRONG', attempts, status: attempts >= o.maxAttempts ? 'CANCELLED' : 'PENDING' };
}

export interface SendRules {
  /** How long after a send to a number with a pending code another one is refused. */
  cooldownMs: number;
  /** Sends to one number in any hour. */
  maxPerHour: number;
}

export const HOUR_MS = 3_600_000;

export type SendDecision = { ok: true } | { ok: false; reason: string; retryAt: number };

/**
 * Whether a code may be sent to a number now, given when its pending code (if any) was last sent and the times of
 * the sends to it in the last hour: inside the cooldown of a pending code, or past the hourly number, it may not
 * (until `retryAt`).
 */
export function decideSend(pendingLastSentAt: number | null, sendsInLastHour: readonly number[], rules: SendRules, now: number): SendDecision {
  if (pendingLastSentAt !== null && now < pendingLastSentAt + rules.cooldownMs) {
    const wait = Math.ceil((pendingLastSentAt + rules.cooldownMs - now) / 1000);
    return {
      ok: false,
      reason: `a code was sent to this number ${Math.floor((now - pendingLastSentAt) / 1000)} s ago; it can be sent again in ${wait} s`,
      retryAt: pendingLastSentAt + rules.cooldownMs,
    };
  }
  const recent = sendsInLastHour.filter((t) => t > now - HOUR_MS).sort((a, b) => a - b);
  if (recent.length >= rules.maxPerHour) {
    // The hour slides: one more send is allowed once enough of these are an hour old.
    const retryAt = recent[recent.length - rules.maxPerHour]! + HOUR_MS;
    return { ok: false, reason: `${recent.length} codes were sent to this number in the last hour; at most ${rules.maxPerHour}`, retryAt };
  }
  return { ok: true };
}
