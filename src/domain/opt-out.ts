const STOP_WORDS = new Set(['STOP', 'ARRET', 'STOPALL', 'UNSUBSCRIBE', 'STOPSMS', 'DESABONNER', 'DESINSCRIRE']);
const START_WORDS = new Set(['START', 'UNSTOP', 'SUBSCRIBE']);

/**
 * Whether an inbound text is an opt-out (STOP) or opt-in (START) command: the word alone, in any case, with or
 * without accents and surrounding punctuation ("Arrêt", "stop.", " STOP ").
 */
export function optCommand(text: string): 'STOP' | 'START' | null {
  const word = text
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toUpperCase()
    .replace(/^[\s\p{P}]+|[\s\p{P}]+$/gu, '');
  if (STOP_WORDS.has(word)) return 'STOP';
  if (START_WORDS.has(word)) return 'START';
  return null;
}

/** The platform's opt-out short code, used by organisations that have not set their own. */
export const DEFAULT_OPT_OUT_SHORT_CODE = '36111';
const MAX_OPT_OUT_TEXT_LENGTH = 40;

/** Where an organisation's recipients send STOP, and the line appended to its marketing messages. */
export interface OptOutSettings {
  shortCode: string;
  /** The mention itself (`STOP au 36111`), without the line break that separates it from the text. */
  text: string;
}

/** The settings in force: the organisation's own, else the platform's (`STOP au` + the short code). */
export function optOutSettings(shortCode: string | null, text: string | null): OptOutSettings {
  const code = shortCode ?? DEFAULT_OPT_OUT_SHORT_CODE;
  return { shortCode: code, text: text ?? `STOP au ${code}` };
}

/** What is appended to a message's text: the mention on a line of its own. */
export function optOutLine(settings: OptOutSettings): string {
  return `\n${settings.text}`;
}

/**
 * Whether the mention goes with a message whatever `stop` says: marketing to a French number, as smsmode does
 * (French operators' code of conduct for commercial SMS).
 */
export function optOutMentionRequired(flow: string, country: string | null): boolean {
  return flow === 'MARKETING' && country === 'FR';
}

/** Whether a message carries the mention: required by the rule, else as asked by `stop`. */
export function carriesOptOutMention(stop: boolean | undefined, flow: string, country: string | null): boolean {
  return optOutMentionRequired(flow, country) || stop === true;
}

export function checkOptOutShortCode(value: string): string | null {
  return /^\d{3,8}$/.test(value) ? null : `"${value}" is not a short code: 3 to 8 digits, e.g. 36111`;
}

export function checkOptOutText(value: string): string | null {
  if (value.trim() === '' || value.length > MAX_OPT_OUT_TEXT_LENGTH) return `must be 1 to ${MAX_OPT_OUT_TEXT_LENGTH} characters`;
  if (/[\r\n]/.test(value)) return 'must be one line';
  if (!/\bSTOP\b/i.test(value)) return 'must contain the word STOP';
  return null;
}

/**
 * Whether an inbound text sent to an opt-out short code is a STOP: the word alone (see `optCommand`), or followed
 * or preceded by the short code, with or without "au" ("STOP 36111", "stop au 36111", "STOP36111").
 */
export function isOptOutReply(text: string, shortCode: string): boolean {
  if (optCommand(text) === 'STOP') return true;
  const rest = text
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toUpperCase()
    .split(shortCode)
    .join(' ')
    .replace(/\bAU\b/g, ' ');
  return text.includes(shortCode) && optCommand(rest.trim()) === 'STOP';
}
