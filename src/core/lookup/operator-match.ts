// Finds the MCC/MNC of an operator known only by name (Google's carrier data says "Orange France", "SFR",
// "Free Mobile") in the Wikipedia-derived mcc-mnc-list ("Orange" / "Orange S.A.", brand / operator columns).
// Pure: the records are passed in.

export interface OperatorRecord {
  countryCode: string | null;
  mcc: string;
  mnc: string;
  brand: string | null;
  operator: string | null;
  status: string | null;
  bands: string | null;
  notes: string | null;
}

export interface OperatorIndex {
  byCountry: ReadonlyMap<string, readonly OperatorRecord[]>;
}

// Networks that no longer carry traffic cannot be the answer for a live range.
const DEAD_STATUSES = new Set(['Not operational', 'Returned spare']);

/** Groups live records by ISO country; "AU/CC/CX"-style rows count for each country they name. */
export function buildOperatorIndex(records: Iterable<OperatorRecord>): OperatorIndex {
  const byCountry = new Map<string, OperatorRecord[]>();
  for (const record of records) {
    if (!record.countryCode || (record.status !== null && DEAD_STATUSES.has(record.status))) continue;
    for (const iso of record.countryCode.split('/')) {
      const list = byCountry.get(iso.trim());
      if (list) list.push(record);
      else byCountry.set(iso.trim(), [record]);
    }
  }
  return { byCountry };
}

// Words that say what kind of company it is rather than which one.
const NOISE_WORDS = new Set([
  'mobile',
  'mobiles',
  'mobil',
  'mobilfunk',
  'movil',
  'moviles',
  'mobiel',
  'mobility',
  'telecom',
  'telecoms',
  'telecommunication',
  'telecommunications',
  'telecomunicaciones',
  'telecomunicacoes',
  'communication',
  'communications',
  'comms',
  'wireless',
  'cellular',
  'celular',
  'network',
  'networks',
  'group',
  'holding',
  'holdings',
  'limited',
  'ltd',
  'llc',
  'inc',
  'corp',
  'corporation',
  'company',
  'co',
  'sa',
  'sau',
  'slu',
  'sl',
  'spa',
  'srl',
  'gmbh',
  'ag',
  'ab',
  'as',
  'asa',
  'plc',
  'pty',
  'bv',
  'nv',
  'oy',
  'oyj',
  'kk',
  'the',
  'of',
  'and',
  'services',
  'solutions',
  'international',
  'global',
  'uk',
  's',
  'a',
  'p',
]);

// Spelled-out brands: Google writes "Three" for the operator whose brand is "3".
const NUMBER_WORDS: Readonly<Record<string, string>> = {
  one: '1',
  two: '2',
  three: '3',
  four: '4',
  five: '5',
  six: '6',
  seven: '7',
  eight: '8',
  nine: '9',
};

export interface OperatorName {
  /** Every word, lower case, accents and punctuation gone: "Orange S.A." → ["orange", "s", "a"]. */
  words: readonly string[];
  /** The words that name the company: "Orange France" in France → ["orange"]. */
  key: readonly string[];
}

function words(text: string): string[] {
  return text
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word !== '');
}

/** Splits an operator name into comparable words; `countryName` ("France") is noise inside that country. */
export function normaliseOperatorName(name: string, countryName = ''): OperatorName {
  const all = words(name);
  const countryWords = new Set(words(countryName));
  const key = all.filter((word) => !NOISE_WORDS.has(word) && !countryWords.has(word)).map((word) => NUMBER_WORDS[word] ?? word);
  return { words: all, key: key.length > 0 ? key : all };
}

const joined = (list: readonly string[]): string => list.join('');

// "Vodafone" leads "Vodafone Italia", "Vodafone" leads "Vodafone/Lycamobile". Only a leading run counts: "Italia" is
// in both "3 Italia" and "Telecom Italia" and says nothing about who they are.
function startsWith(outer: readonly string[], inner: readonly string[]): boolean {
  return inner.length < outer.length && joined(inner).length >= 3 && inner.every((word, i) => outer[i] === word);
}

export const MATCH_EXACT = 3;
export const MATCH_CONTAINED = 2;
export const MATCH_FORMER_NAME = 1;

/** How well a name from the carrier data matches one column of the list (0 = not at all). */
export function nameMatchScore(wanted: OperatorName, listed: OperatorName): number {
  if (wanted.key.length === 0 || listed.key.length === 0) return 0;
  if (joined(wanted.key) === joined(listed.key) || joined(wanted.words) === joined(listed.words)) return MATCH_EXACT;
  if (startsWith(listed.key, wanted.key) || startsWith(wanted.key, listed.key)) return MATCH_CONTAINED;
  return 0;
}

// "Former E-Plus until 2014", "Formerly D1 - DeTeMobil, D1-Telekom, T-D1, T-Mobile", "Previously owned by Orange S.A.":
// ranges Google still files under the old name belong to this network now.
const FORMER_NAMES = /\b(?:former(?:ly)?|previously)\b([^;]*)/gi;

/** True when the notes give `wanted` as a former name of the network (word runs compared without spaces). */
export function isFormerName(wanted: OperatorName, notes: string | null): boolean {
  if (!notes) return false;
  const target = joined(wanted.words);
  if (target.length < 3) return false;
  for (const match of notes.matchAll(FORMER_NAMES)) {
    const segment = words(match[1] ?? '');
    for (let start = 0; start < segment.length; start++) {
      let run = '';
      for (let end = start; end < segment.length && run.length < target.length; end++) run += segment[end];
      if (run === target) return true;
    }
  }
  return false;
}

function recordScore(wanted: OperatorName, record: OperatorRecord, countryName: string): number {
  let score = 0;
  for (const column of [record.brand, record.operator]) {
    if (column) score = Math.max(score, nameMatchScore(wanted, normaliseOperatorName(column, countryName)));
  }
  if (score === 0 && isFormerName(wanted, record.notes)) score = MATCH_FORMER_NAME;
  return score;
}

// Notes that mark a code as a side use of a network (roaming, femtocells, test, coverage-obligation areas, IoT).
const SECONDARY_USE = /\b(?:roaming|femto\w*|test\w*|zones? blanches|iot|m2m|private|data only|resellers?)\b/i;

function radioBandCount(record: OperatorRecord): number {
  return (record.bands ?? '')
    .split('/')
    .map((band) => band.trim())
    .filter((band) => band !== '' && !/^(?:mvno|full mvno|unknown)$/i.test(band)).length;
}

/** Orders equally well named candidates: operational, a main code, a radio network, the most bands, lowest code. */
function preferenceOrder(a: OperatorRecord, b: OperatorRecord): number {
  const operational = (r: OperatorRecord) => (r.status === 'Operational' ? 0 : 1);
  const secondary = (r: OperatorRecord) => (SECONDARY_USE.test(r.notes ?? '') ? 1 : 0);
  return (
    operational(a) - operational(b) ||
    secondary(a) - secondary(b) ||
    radioBandCount(b) - radioBandCount(a) ||
    Number(a.mcc) - Number(b.mcc) ||
    a.mnc.length - b.mnc.length ||
    Number(a.mnc) - Number(b.mnc)
  );
}

/**
 * The list entry for the operator called `networkName` in country `iso`, or null when no entry's brand, operator
 * or former name matches. Among equal matches the preference order above decides (e.g. SFR → 208-10, not the
 * 208-09 roaming code).
 */
export function findOperator(index: OperatorIndex, iso: string, networkName: string, countryName = ''): OperatorRecord | null {
  const candidates = index.byCountry.get(iso);
  if (!candidates) return null;
  const wanted = normaliseOperatorName(networkName, countryName);
  let best: OperatorRecord | null = null;
  let bestScore = 0;
  for (const record of candidates) {
    const score = recordScore(wanted, record, countryName);
    if (score === 0) continue;
    if (score > bestScore || (score === bestScore && best && preferenceOrder(record, best) < 0)) {
      best = record;
      bestScore = score;
    }
  }
  return best;
}
