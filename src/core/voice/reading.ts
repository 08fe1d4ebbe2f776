/**
 * How a voice message's text is read aloud: dates, times and codes are written out the way a person of the language
 * says them before the synthesiser sees the text. A synthesiser left alone reads `482913` as "four hundred and
 * eighty-two thousand…" and `15/03/2025` as three numbers; a code is read digit by digit with pauses, a date with
 * its month's name, a time with the language's word for the hour. Everything else is left to the synthesiser, which
 * reads ordinary numbers and amounts well in each language.
 */
import type { VoiceLanguage } from './tts.ts';

interface LanguageRules {
  months: readonly string[];
  date(day: number, month: string, year: number): string;
  time(hours: number, minutes: number): string;
  /** Words after which a number is a code (read digit by digit whatever its length). */
  codeWords: readonly string[];
}

const RULES: Readonly<Record<VoiceLanguage, LanguageRules>> = {
  'fr-FR': {
    months: ['janvier', 'février', 'mars', 'avril', 'mai', 'juin', 'juillet', 'août', 'septembre', 'octobre', 'novembre', 'décembre'],
    date: (d, m, y) => `${d === 1 ? '1er' : d} ${m} ${y}`,
    time: (h, min) => (min === 0 ? `${h} heures` : `${h} heures ${min}`),
    codeWords: ['code', 'pin', 'otp', 'mot de passe', 'référence', 'numéro', 'n°'],
  },
  'en-GB': {
    months: ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'],
    date: (d, m, y) => `${englishOrdinal(d)} of ${m} ${y}`,
    time: (h, min) => (min === 0 ? `${h} o'clock` : min < 10 ? `${h} oh ${min}` : `${h} ${min}`),
    codeWords: ['code', 'pin', 'otp', 'password', 'reference', 'number', 'no.'],
  },
  'de-DE': {
    months: ['Januar', 'Februar', 'März', 'April', 'Mai', 'Juni', 'Juli', 'August', 'September', 'Oktober', 'November', 'Dezember'],
    date: (d, m, y) => `${d}. ${m} ${y}`,
    time: (h, min) => (min === 0 ? `${h} Uhr` : `${h} Uhr ${min}`),
    codeWords: ['code', 'pin', 'otp', 'kennwort', 'passwort', 'nummer', 'nr.'],
  },
  'es-ES': {
    months: ['enero', 'febrero', 'marzo', 'abril', 'mayo', 'junio', 'julio', 'agosto', 'septiembre', 'octubre', 'noviembre', 'diciembre'],
    date: (d, m, y) => `${d} de ${m} de ${y}`,
    time: (h, min) => (min === 0 ? `${h} horas` : `${h} y ${min}`),
    codeWords: ['código', 'codigo', 'pin', 'otp', 'clave', 'contraseña', 'número', 'numero'],
  },
  'it-IT': {
    months: ['gennaio', 'febbraio', 'marzo', 'aprile', 'maggio', 'giugno', 'luglio', 'agosto', 'settembre', 'ottobre', 'novembre', 'dicembre'],
    date: (d, m, y) => `${d === 1 ? 'primo' : d} ${m} ${y}`,
    time: (h, min) => (min === 0 ? `${h}` : `${h} e ${min}`),
    codeWords: ['codice', 'pin', 'otp', 'password', 'numero'],
  },
  'pt-PT': {
    months: ['janeiro', 'fevereiro', 'março', 'abril', 'maio', 'junho', 'julho', 'agosto', 'setembro', 'outubro', 'novembro', 'dezembro'],
    date: (d, m, y) => `${d} de ${m} de ${y}`,
    time: (h, min) => (min === 0 ? `${h} horas` : `${h} horas e ${min}`),
    codeWords: ['código', 'codigo', 'pin', 'otp', 'senha', 'palavra-passe', 'número', 'numero'],
  },
  'nl-NL': {
    months: ['januari', 'februari', 'maart', 'april', 'mei', 'juni', 'juli', 'augustus', 'september', 'oktober', 'november', 'december'],
    date: (d, m, y) => `${d} ${m} ${y}`,
    time: (h, min) => (min === 0 ? `${h} uur` : `${h} uur ${min}`),
    codeWords: ['code', 'pincode', 'pin', 'otp', 'wachtwoord', 'nummer', 'nr.'],
  },
};

function englishOrdinal(n: number): string {
  const tens = n % 100;
  if (tens >= 11 && tens <= 13) return `${n}th`;
  return `${n}${({ 1: 'st', 2: 'nd', 3: 'rd' } as Record<number, string>)[n % 10] ?? 'th'}`;
}

/** Runs of this many digits or more are codes (an OTP, a reference, a phone number), whatever precedes them. */
const CODE_MIN_DIGITS = 5;
/** A shorter run (at least this long) is a code when a code word comes just before it; otherwise a number. */
const SHORT_CODE_MIN_DIGITS = 3;

/**
 * A code read one character at a time: a comma after each for a short pause, a full stop between groups for a longer
 * one (`482913` → `4, 8, 2. 9, 1, 3`). Groups are of three, never leaving one character alone (`4829` → `4, 8. 2, 9`).
 */
export function spellCode(code: string): string {
  const chars = [...code];
  const sizes: number[] = [];
  let left = chars.length;
  while (left > 0) {
    const size = left === 4 ? 2 : Math.min(3, left);
    sizes.push(size);
    left -= size;
  }
  const groups: string[] = [];
  let at = 0;
  for (const size of sizes) {
    groups.push(chars.slice(at, at + size).join(', '));
    at += size;
  }
  return groups.join('. ');
}

const DATE_DMY = /(?<![\d/.-])(\d{1,2})([/.-])(\d{1,2})\2(\d{4})(?![\d/.-]*\d)/g;
const DATE_ISO = /(?<![\d-])(\d{4})-(\d{2})-(\d{2})(?![\d-]*\d)/g;
const TIME = /(?<![\d:])([01]?\d|2[0-3])(?::|[hH](?=\d{2}\b))([0-5]\d)(?![\d:])/g;
const ALNUM_CODE = /(?<![\p{L}\p{N}])(?=[A-Z0-9]*\d)(?=[A-Z0-9]*[A-Z])[A-Z0-9]{4,}(?![\p{L}\p{N}])/gu;
const DIGITS = /(?<![\p{L}\p{N},.])(\d+)(?![\p{L}\p{N}]|[,.]\d)/gu;

function validDate(day: number, month: number, year: number): boolean {
  if (month < 1 || month > 12 || day < 1 || year < 1000) return false;
  return day <= new Date(Date.UTC(year, month, 0)).getUTCDate();
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Whether one of the language's code words comes at most two words before a number ("code", "code is", "Code lautet"). */
function afterCodeWord(before: string, words: readonly string[]): boolean {
  const tail = before.slice(-60).toLowerCase();
  return words.some((w) => new RegExp(`(?:^|[^\\p{L}])${escape(w)}(?:[^\\p{L}\\p{N}]+\\p{L}+){0,2}[^\\p{L}\\p{N}]*$`, 'u').test(tail));
}

/** A spelled code ends with a pause unless punctuation already follows it; a longer one before its next group. */
function spoken(spelled: string, whole: string, end: number): string {
  const rest = whole.slice(end);
  if (/^[ -]\d/.test(rest)) return `${spelled}.`;
  return rest === '' || /^\s*[.,;:!?]/.test(rest) ? spelled : `${spelled},`;
}

/** The text as it should be spoken in `language`: dates, times and codes written out (see the module comment). */
export function readAloud(text: string, language: VoiceLanguage): string {
  const rules = RULES[language];
  const date = (all: string, d: number, m: number, y: number) => (validDate(d, m, y) ? rules.date(d, rules.months[m - 1]!, y) : all);
  let out = text.replace(DATE_ISO, (all, y: string, m: string, d: string) => date(all, Number(d), Number(m), Number(y)));
  out = out.replace(DATE_DMY, (all, d: string, _sep: string, m: string, y: string) => date(all, Number(d), Number(m), Number(y)));
  out = out.replace(TIME, (_all, h: string, min: string) => rules.time(Number(h), Number(min)));
  out = out.replace(ALNUM_CODE, (code: string, offset: number, whole: string) => spoken(spellCode(code), whole, offset + code.length));
  // A code written in groups ("123 456") is read as one: a group right after a spelled one is spelled too.
  let spelledUntil = -1;
  out = out.replace(DIGITS, (digits: string, _d: string, offset: number, whole: string) => {
    const follows = spelledUntil >= 0 && /^[ -]$/.test(whole.slice(spelledUntil, offset));
    const code =
      digits.length >= CODE_MIN_DIGITS ||
      (digits.length >= SHORT_CODE_MIN_DIGITS && (follows || afterCodeWord(whole.slice(0, offset), rules.codeWords))) ||
      (follows && digits.length >= 2);
    if (!code) return digits;
    spelledUntil = offset + digits.length;
    return spoken(spellCode(digits), whole, spelledUntil);
  });
  return out;
}
