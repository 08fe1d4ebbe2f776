// The kinds of value a setting takes: each parses a value as written — a string from the environment or a `_FILE`,
// or a scalar of the JSON or YAML configuration file — and says, for the documentation, what it accepts.

/** A value as written: text from the environment, or what the configuration file holds. */
export type Written = unknown;

export interface Kind<T> {
  /** What the value may be, in a few words of Markdown: "1–3,600", "`true` or `false`". */
  readonly values: string;
  /** The value, or an Error whose message says what is wrong (the loader names the setting). */
  parse(written: Written): T;
}

const count = (n: number): string => n.toLocaleString('en-US');

/** Text: a string, or a number of the configuration file read as its digits. */
function asText(written: Written): string {
  if (typeof written !== 'string' && typeof written !== 'number') throw new Error('must be a string');
  return String(written);
}

export function text(values = 'text'): Kind<string> {
  return { values, parse: asText };
}

/** Text checked, and perhaps reshaped, by `check` (which throws an Error saying what is wrong). */
export function textWhere<T>(values: string, check: (text: string) => T): Kind<T> {
  return { values, parse: (written) => check(asText(written)) };
}

/** Text of at least `min` characters. */
export function longText(min: number, hint = ''): Kind<string> {
  return textWhere(`text, ${min} characters or more`, (s) => {
    if (s.length < min) throw new Error(`must be at least ${min} characters long${hint}`);
    return s;
  });
}

/**
 * A whole number from `min` to `max`, times `scale` once read (a setting in seconds kept in milliseconds); `check`
 * may refuse more.
 */
export function integer(min: number, max: number, opts: { scale?: number; check?: (n: number) => string | null; values?: string } = {}): Kind<number> {
  return {
    values: opts.values ?? `${count(min)}–${count(max)}`,
    parse(written) {
      const n = typeof written === 'number' ? written : /^\s*-?\d+\s*$/.test(String(written)) ? Number(written) : Number.NaN;
      if (!Number.isInteger(n) || n < min || n > max) {
        throw new Error(`must be an integer between ${min} and ${max}, got "${String(written)}"`);
      }
      const refused = opts.check?.(n);
      if (refused) throw new Error(refused);
      return n * (opts.scale ?? 1);
    },
  };
}

export function port(): Kind<number> {
  return integer(0, 65535, { values: '0–65,535 (0: any free port)' });
}

const TRUE = ['true', '1', 'yes', 'on'];
const FALSE = ['false', '0', 'no', 'off'];

export function boolean(): Kind<boolean> {
  return {
    values: '`true` or `false`',
    parse(written) {
      if (typeof written === 'boolean') return written;
      const s = String(written).toLowerCase();
      if (TRUE.includes(s)) return true;
      if (FALSE.includes(s)) return false;
      throw new Error(`must be true or false, got "${String(written)}"`);
    },
  };
}

/**
 * One of `choices`, after `fold` (the case a setting ignores); `refusal` says what they mean when the value is none.
 */
export function oneOf<const C extends string>(choices: readonly C[], opts: { fold?: 'lower' | 'upper'; refusal?: string } = {}): Kind<C> {
  return {
    values: choices.map((c) => `\`${c}\``).join(', '),
    parse(written) {
      const s = asText(written);
      const folded = opts.fold === 'lower' ? s.toLowerCase() : opts.fold === 'upper' ? s.toUpperCase() : s;
      if (!(choices as readonly string[]).includes(folded)) throw new Error(opts.refusal ?? `must be one of ${choices.join(', ')}`);
      return folded as C;
    },
  };
}
