/** The options of a legacy SMS send that shape its text: `classe_msg`, `stop` and `nbr_msg`. */
import { fail } from '../../core/errors.ts';
import { analyseText, type TextEncoding, TextError } from '../../domain/text.ts';
import { OPT_OUT_MENTION } from '../../core/sms/prepare.ts';
import { LEGACY_DEFAULT_MAX_PARTS, type LegacyParams, param } from './params.ts';

export interface SmsOptions {
  /** `classe_msg`: 2 (default), 4 (replies allowed) or 9 (Unicode). */
  classe: number;
  /** UNICODE for classe 9; otherwise Tern chooses from the text. */
  encoding: TextEncoding | undefined;
  /** `stop`: 1 adds the opt-out mention when the message stays one SMS, 2 always. */
  stop: 1 | 2 | null;
  /** `nbr_msg`: the most SMS parts a text may take. */
  maxParts: number;
}

export function smsOptionsOf(params: LegacyParams): SmsOptions {
  const classe = param(params, 'classe_msg') ?? '2';
  if (!['2', '4', '9'].includes(classe)) fail('INVALID_REQUEST', `classe_msg: must be 2, 4 or 9 (Unicode), got "${classe}"`);
  const stop = param(params, 'stop');
  if (stop !== undefined && stop !== '1' && stop !== '2') fail('INVALID_REQUEST', 'stop: must be 1 or 2');
  const nbr = param(params, 'nbr_msg');
  if (nbr !== undefined && !(/^\d+$/.test(nbr) && Number(nbr) >= 1 && Number(nbr) <= 10)) {
    fail('INVALID_REQUEST', 'nbr_msg: must be a whole number from 1 to 10');
  }
  return {
    classe: Number(classe),
    encoding: classe === '9' ? 'UNICODE' : undefined,
    stop: stop === undefined ? null : (Number(stop) as 1 | 2),
    maxParts: nbr === undefined ? LEGACY_DEFAULT_MAX_PARTS : Number(nbr),
  };
}

/**
 * Whether the opt-out mention (`mention`, the organisation's line) goes with `text` under these options, checking
 * that the text then fits `nbr_msg`. `field` names the text in errors. On marketing to French numbers the core
 * appends it whatever this says.
 */
export function stopFor(text: string, options: SmsOptions, field = 'message', mention = OPT_OUT_MENTION): boolean {
  const parts = (t: string) => {
    try {
      return analyseText(t, options.encoding).messagePartCount;
    } catch (err) {
      if (err instanceof TextError) fail('INVALID_REQUEST', `${field}: ${err.message}`);
      throw err;
    }
  };
  const stop = options.stop === 2 || (options.stop === 1 && parts(`${text}${mention}`) === 1);
  const needed = parts(stop ? `${text}${mention}` : text);
  if (needed > options.maxParts) fail('TOO_MANY_PARTS', `${field}: needs ${needed} SMS, more than nbr_msg (${options.maxParts})`);
  return stop;
}
