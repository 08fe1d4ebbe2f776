/** Money is integer micro-euros inside Tern; decimal euros only at the edges. */
export const MICROS_PER_EURO = 1_000_000;

export type ParsedAmount = { ok: true; micros: number } | { ok: false; reason: string };

/**
 * Parses a decimal euro amount (number or string) with at most `maxDecimals` decimals into micro-euros,
 * without going through binary floating point for the fraction.
 */
export function parseEuros(value: unknown, opts: { maxDecimals?: number; allowZero?: boolean } = {}): ParsedAmount {
  const maxDecimals = opts.maxDecimals ?? 6;
  let text: string;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return { ok: false, reason: 'must be a finite number' };
    text = numberToPlainString(value);
  } else if (typeof value === 'string') {
    // As written: "  1", "+1" or "1 " are not amounts, however a lenient parser would read them.
    text = value;
  } else {
    return { ok: false, reason: 'must be a number' };
  }
  const m = /^(-?)(\d{1,12})(?:\.(\d+))?$/.exec(text);
  if (!m) return { ok: false, reason: 'must be a decimal number of euros (digits, then a point and decimals if any)' };
  const [, sign, whole, fraction = ''] = m;
  if (fraction.length > maxDecimals) return { ok: false, reason: `must have at most ${maxDecimals} decimals` };
  const micros = Number(whole) * MICROS_PER_EURO + Number(fraction.padEnd(6, '0').slice(0, 6) || '0');
  if (sign === '-' && micros !== 0) return { ok: false, reason: 'must be positive' };
  if (micros === 0 && !opts.allowZero) return { ok: false, reason: 'must be greater than zero' };
  return { ok: true, micros };
}

function numberToPlainString(n: number): string {
  const s = String(n);
  if (!/e/i.test(s)) return s;
  return n.toFixed(20).replace(/\.?0+$/, '');
}

/** Micro-euros → euros as a JSON number, exact to the micro-euro. */
export function toEuros(micros: number): number {
  return Math.round(micros) / MICROS_PER_EURO;
}
