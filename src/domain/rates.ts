/**
 * What operators charge: a rate table per connector. A rate is micro-euros per part for the messages it matches (a
 * type, a destination prefix, a country, an MCC/MNC; an empty field matches all) while it is in force (from
 * `validFrom`, until `validTo` excluded). Tables are only added to: a new price list is new rates from its date, so
 * the cost of a message is the rate in force when it was placed, whatever came after.
 */
import { type CsvRecord, CsvError, parseCsv } from './csv.ts';
import { parseEuros } from './money.ts';
import { parseDateBound } from './dates.ts';

export interface Rate {
  id: string;
  connectorId: string;
  /** SMS, RCS, VOICE, or '' for every type. */
  type: string;
  /** Digits, or ''. */
  prefix: string;
  /** ISO 3166 alpha-2, or ''. */
  country: string;
  /** MCC+MNC (5 or 6 digits), or ''. */
  mccMnc: string;
  /** Micro-euros per part. */
  amount: number;
  validFrom: number;
  validTo: number | null;
}

export interface Costed {
  type: string;
  recipient: string;
  country: string | null;
  mccMnc: string | null;
}

/**
 * Which of two rates that both match is the one that applies: the more specific (an MCC/MNC, then the longer prefix,
 * then a country, then a type), and between equally specific ones the one in force since the latest date (a newer
 * price list), then the one loaded last.
 */
function better(a: Rate, b: Rate): boolean {
  const rank = (r: Rate) => [r.mccMnc ? 1 : 0, r.prefix.length, r.country ? 1 : 0, r.type ? 1 : 0, r.validFrom];
  const ra = rank(a);
  const rb = rank(b);
  for (let i = 0; i < ra.length; i++) if (ra[i] !== rb[i]) return ra[i]! > rb[i]!;
  return a.id > b.id;
}

export function rateMatches(r: Rate, m: Costed, at: number): boolean {
  if (r.validFrom > at || (r.validTo !== null && r.validTo <= at)) return false;
  if (r.type !== '' && r.type !== m.type) return false;
  if (r.prefix !== '' && !m.recipient.startsWith(r.prefix)) return false;
  if (r.country !== '' && r.country !== m.country) return false;
  if (r.mccMnc !== '' && r.mccMnc !== m.mccMnc) return false;
  return true;
}

/** Every connector's rates, for lookups by connector. */
export class RateBook {
  private readonly byConnector = new Map<string, Rate[]>();

  constructor(rates: readonly Rate[]) {
    for (const r of rates) {
      const list = this.byConnector.get(r.connectorId);
      if (list) list.push(r);
      else this.byConnector.set(r.connectorId, [r]);
    }
  }

  /** The rate of `connectorId` that applies to the message at `at`, or null when none does. */
  rateFor(connectorId: string, m: Costed, at: number): Rate | null {
    let best: Rate | null = null;
    for (const r of this.byConnector.get(connectorId) ?? []) if (rateMatches(r, m, at) && (best === null || better(r, best))) best = r;
    return best;
  }

  hasRates(connectorId: string): boolean {
    return this.byConnector.has(connectorId);
  }
}

/** A rate as given, before it has an id and a connector. */
export type RateInput = Omit<Rate, 'id' | 'connectorId'>;

export class RateError extends Error {
  constructor(
    /** Where in the input: `rates[2].mcc`, `line 4: price`. */
    readonly field: string,
    readonly reason: string,
  ) {
    super(`${field}: ${reason}`);
    this.name = 'RateError';
  }
}

const TYPES = ['SMS', 'RCS', 'VOICE'];
/** At most this many euros per part: a figure past it is a mistake in the list. */
const MAX_AMOUNT = 100_000_000;

/** A field as text, trimmed; absent, null and '' are ''. */
function text(v: unknown, field: string): string {
  if (v === undefined || v === null) return '';
  if (typeof v === 'number' && Number.isInteger(v)) return String(v);
  if (typeof v !== 'string') throw new RateError(field, 'must be a string');
  return v.trim();
}

/** A date (a UTC day's first instant) or a date-time; for `validTo`, the first instant the rate is no longer in force. */
function instant(v: unknown, field: string): number | null {
  const t = text(v, field);
  if (t === '') return null;
  const ms = parseDateBound(t, 'start');
  if (ms === null) throw new RateError(field, `must be a date (YYYY-MM-DD) or an ISO 8601 date-time, not "${t}"`);
  return ms;
}

/**
 * Checks one rate given as fields (the admin API's JSON, or a CSV record's columns by name): `price` (euros per
 * part, or `amount`), `currency` (EUR, the only one Tern accounts in), `type`, `prefix`, `country`, `mcc` and `mnc`
 * or `mccMnc`, `validFrom`/`valid_from` (default `now`), `validTo`/`valid_to`. Errors name `at` and the field.
 */
export function checkRate(input: Record<string, unknown>, at: string, now: number): RateInput {
  const get = (...names: string[]) => {
    for (const n of names) if (input[n] !== undefined) return { name: n, value: input[n] };
    return { name: names[0]!, value: undefined };
  };
  const f = (name: string) => `${at}.${name}`;
  const price = get('price', 'amount', 'rate', 'cost');
  if (price.value === undefined || price.value === '') throw new RateError(f('price'), 'is required (euros per part)');
  const parsed = parseEuros(typeof price.value === 'string' ? price.value.trim().replace(',', '.') : price.value, { allowZero: true });
  if (!parsed.ok) throw new RateError(f(price.name), `euros per part: ${parsed.reason}`);
  if (parsed.micros > MAX_AMOUNT) throw new RateError(f(price.name), 'at most 100 euros per part');
  const currency = text(get('currency').value, f('currency')).toUpperCase();
  if (currency !== '' && currency !== 'EUR') throw new RateError(f('currency'), `only EUR is accounted in, not ${currency}`);
  const type = text(get('type', 'messageType', 'message_type').value, f('type')).toUpperCase();
  if (type !== '' && !TYPES.includes(type)) throw new RateError(f('type'), `one of ${TYPES.join(', ')}, or empty for every type`);
  const prefix = text(get('prefix').value, f('prefix')).replace(/^\+/, '');
  if (prefix !== '' && !/^\d{1,15}$/.test(prefix)) throw new RateError(f('prefix'), 'digits of an international number');
  const country = text(get('country', 'countryCode', 'country_code').value, f('country')).toUpperCase();
  if (country !== '' && !/^[A-Z]{2}$/.test(country)) throw new RateError(f('country'), 'an ISO 3166 alpha-2 code, e.g. FR');
  let mccMnc = text(get('mccMnc', 'mcc_mnc').value, f('mccMnc'));
  const mcc = text(get('mcc').value, f('mcc'));
  const mnc = text(get('mnc').value, f('mnc'));
  if (mccMnc === '' && (mcc !== '' || mnc !== '')) {
    if (!/^\d{3}$/.test(mcc)) throw new RateError(f('mcc'), 'three digits' + (mnc !== '' ? ' (an MNC needs its MCC)' : ''));
    if (mnc !== '' && !/^\d{2,3}$/.test(mnc)) throw new RateError(f('mnc'), 'two or three digits');
    if (mnc === '') throw new RateError(f('mnc'), 'is required with an MCC (a rate for a whole country goes by country)');
    mccMnc = mcc + mnc;
  }
  if (mccMnc !== '' && !/^\d{5,6}$/.test(mccMnc)) throw new RateError(f('mccMnc'), 'MCC and MNC, 5 or 6 digits');
  const validFrom = instant(get('validFrom', 'valid_from').value, f('validFrom')) ?? now;
  const validTo = instant(get('validTo', 'valid_to').value, f('validTo'));
  if (validTo !== null && validTo <= validFrom) throw new RateError(f('validTo'), 'must come after validFrom');
  return { type, prefix, country, mccMnc, amount: parsed.micros, validFrom, validTo };
}

/** Column names as operators write them, to the names checkRate reads. */
function columnName(header: string): string {
  return header
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_');
}

/**
 * An operator's price list in CSV: a header row naming the columns (country, mcc, mnc, prefix, price, currency,
 * valid_from, valid_to, type — any order, others ignored), then one rate a line. Errors name the line and column.
 */
export function parseRateCsv(csv: string, now: number, maxRates: number): RateInput[] {
  let records: CsvRecord[];
  try {
    records = parseCsv(csv);
  } catch (e) {
    if (e instanceof CsvError) throw new RateError(`line ${e.line}`, e.reason);
    throw e;
  }
  if (records.length === 0) throw new RateError('line 1', 'the file is empty: a header row, then one rate a line');
  const header = records[0]!.fields.map(columnName);
  if (!header.some((h) => ['price', 'amount', 'rate', 'cost'].includes(h)))
    throw new RateError('line 1', 'the header row must name a price column (price, amount, rate or cost)');
  const rows = records.slice(1);
  if (rows.length === 0) throw new RateError('line 2', 'no rate after the header row');
  if (rows.length > maxRates) throw new RateError(`line ${rows[maxRates]!.line}`, `at most ${maxRates} rates a file`);
  return rows.map((r) => {
    if (r.fields.length > header.length) throw new RateError(`line ${r.line}`, `${r.fields.length} fields, the header has ${header.length}`);
    const fields: Record<string, unknown> = {};
    header.forEach((h, i) => {
      if (h !== '') fields[h] = r.fields[i] ?? '';
    });
    return checkRate(fields, `line ${r.line}`, now);
  });
}
