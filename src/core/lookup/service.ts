// Number lookup as a billed use case: the static description (libphonenumber, Google's carrier data, MCC/MNC list),
// the live part from the operator network, and the charge: one ledger row and the consumption rollups, in one
// transaction per request.
import { type LiveAnswer, type LiveStatus, LookupUnavailableError, type NumberStatusProvider } from './number-status.ts';
import { DEFAULT_PRICES } from '../../domain/default-prices.ts';
import { toEuros } from '../../domain/money.ts';
import { type CountryCode, normaliseMsisdn, type MsisdnRejection } from '../../domain/phone.ts';
import { PriceList } from '../../domain/pricing.ts';
import { lookupNumber, type NumberLookup } from './enrich.ts';
import type { Channel } from '../../store/channels.ts';
import { inTransaction, type Store } from '../../store/db.ts';
import { applyBalanceChange } from '../../store/ledger.ts';
import { findOrganisationBilling } from '../../store/organisations.ts';
import { loadPrices } from '../../store/prices.ts';
import { findNumberLookups, saveNumberLookup } from '../../store/number-lookups.ts';
import { RollupBatch } from '../../store/rollups.ts';
import { fail, CoreError } from '../errors.ts';
import { utcDay } from '../../domain/dates.ts';

/**
 * What a lookup answers: the static description and the live part, `null` wherever unknown. `valid` is the network's
 * word when it gave one (a number the plan allows may belong to no subscriber), else the number plan's.
 */
export type LookupAnswer = Omit<NumberLookup, 'valid'> & Omit<LiveStatus, 'valid'> & { valid: boolean };

export type BulkLookupItem = { input: string; answer: LookupAnswer } | { input: string; error: CoreError };

export const MAX_BULK_LOOKUPS = 1_000;

/** How many live queries one bulk request keeps in flight at once. */
const LIVE_QUERY_CONCURRENCY = 16;

const DAY_MS = 86_400_000;

const REJECTION_DETAIL: Record<MsisdnRejection, string> = {
  EMPTY: 'is empty',
  NOT_DIGITS: 'is not a phone number: send digits in international form, e.g. 33612345678 or +33 6 12 34 56 78',
  TOO_SHORT: 'is too short for a phone number',
  TOO_LONG: 'is longer than the 15 digits of an international number',
  NATIONAL_WITHOUT_COUNTRY:
    "is a national number: send it in international form with its country code, e.g. 33612345678, or set the organisation's defaultCountry",
};

export interface LookupOptions {
  /** How long a live result is kept per number for routing (TERN_LOOKUP_CACHE_DAYS). */
  cacheDays: number;
  /** The country national numbers are read in for an organisation (its defaultCountry), as sends read them. */
  countryOf?: (organisationId: string) => Promise<CountryCode | null>;
}

/** What routing knows of a number from its last live lookup. */
export interface KnownNetwork {
  currentMccMnc: string | null;
  valid: boolean | null;
  reachable: boolean | null;
}

/**
 * Charging rule: every input that has the form of a phone number (it normalises to an MSISDN) and that the network
 * answered about is one query and is charged, valid or not, as a real provider does. Input that is not a phone number
 * at all is refused before any query, and a query the provider could not answer is an error: neither costs anything.
 * Every live answer is kept per number (`number_lookups`) for routing.
 */
export class LookupService {
  constructor(
    private readonly store: Store,
    private readonly numberStatus: NumberStatusProvider,
    private readonly opts: LookupOptions = { cacheDays: 30 },
  ) {}

  /**
   * Looks one number up and charges it to the channel's organisation (its parent when billed by the parent).
   * Throws INVALID_PHONE_NUMBER, UNAVAILABLE (the provider did not answer) or INSUFFICIENT_FUNDS; none is charged.
   */
  async lookup(channel: Channel, input: string, now = Date.now()): Promise<LookupAnswer> {
    const msisdn = parseInput(input, await this.countryOf(channel));
    if (msisdn instanceof CoreError) throw msisdn;
    const number = await lookupNumber(msisdn);
    const live = await this.live(number, now);
    if (live instanceof CoreError) throw live;
    await this.charge(channel, [number], now);
    return merge(number, live);
  }

  /** The country the channel's organisation reads national numbers in, or null. */
  private async countryOf(channel: Channel): Promise<CountryCode | null> {
    return (await this.opts.countryOf?.(channel.organisationId)) ?? null;
  }

  /**
   * Looks up to MAX_BULK_LOOKUPS numbers up, answering in input order. An input that is no phone number, or that the
   * provider could not answer about, is an error of its item only (not charged); the others are charged together in
   * one transaction, all or none.
   */
  async lookupMany(channel: Channel, inputs: readonly string[], now = Date.now()): Promise<BulkLookupItem[]> {
    if (inputs.length > MAX_BULK_LOOKUPS) {
      fail('INVALID_REQUEST', `at most ${MAX_BULK_LOOKUPS} numbers per request, got ${inputs.length}`);
    }
    const country = await this.countryOf(channel);
    const parsed = inputs.map((input) => parseInput(input, country));
    // oxlint-disable-next-line typescript/await-thenable -- promises and nulls: Promise.all passes the nulls through
    const numbers = await Promise.all(parsed.map((p) => (p instanceof CoreError ? null : lookupNumber(p))));
    const live = await mapWithConcurrency(numbers, LIVE_QUERY_CONCURRENCY, (n) => (n === null ? null : this.live(n, now)));
    const charged = numbers.filter((n, i): n is NumberLookup => n !== null && !(live[i] instanceof CoreError));
    await this.charge(channel, charged, now);
    return inputs.map((input, i) => {
      const number = numbers[i];
      const status = live[i];
      if (!number || !status) return { input, error: parsed[i] as CoreError };
      if (status instanceof CoreError) return { input, error: status };
      return { input, answer: merge(number, status) };
    });
  }

  /**
   * The live lookup a route asks for before a send (`lookupBeforeSend`), charged to the message's channel as a
   * lookup of its own. Null when it could not be made (no answer, no funds): the message goes as routed.
   */
  async beforeSend(channel: Channel, msisdn: string, now = Date.now()): Promise<LiveStatus | null> {
    const number = await lookupNumber(msisdn);
    const answer = await this.liveAnswer(number, now);
    // Nothing live to act on (no lookup connector routed, or only the number plan's word): nothing to charge either.
    if (answer instanceof CoreError || answer.connector === null || answer.status.offline) return null;
    const live = answer.status;
    try {
      await this.charge(channel, [number], now);
    } catch (err) {
      if (err instanceof CoreError && err.kind === 'INSUFFICIENT_FUNDS') return null;
      throw err;
    }
    return live;
  }

  /** What the last live lookups (not expired) say of these numbers' networks, by number: one query. */
  async knownNetworks(msisdns: readonly string[], now = Date.now()): Promise<Map<string, KnownNetwork>> {
    const rows = await findNumberLookups(this.store.db, msisdns, now);
    return new Map(rows.map((r) => [r.msisdn, { currentMccMnc: r.current_mcc_mnc, valid: bool(r.valid), reachable: bool(r.reachable) }]));
  }

  // A provider that could not answer is the request's error (UNAVAILABLE), unless its connector answers offline.
  private async live(number: NumberLookup, now: number): Promise<LiveStatus | CoreError> {
    const answer = await this.liveAnswer(number, now);
    return answer instanceof CoreError ? answer : answer.status;
  }

  private async liveAnswer(number: NumberLookup, now: number): Promise<LiveAnswer | CoreError> {
    let answer: LiveAnswer;
    try {
      answer = await this.numberStatus.liveStatus(number);
    } catch (err) {
      const reason = err instanceof LookupUnavailableError ? err.reason : 'the lookup provider failed';
      return new CoreError('UNAVAILABLE', `the live lookup of ${number.msisdn} could not be made: ${reason}; nothing was charged`);
    }
    const s = answer.status;
    const saidSomething = s.valid !== null || s.reachable !== null || s.currentNetwork !== null;
    if (answer.connector !== null && !s.offline && saidSomething) await this.remember(number.msisdn, s, answer.connector, now);
    return answer;
  }

  private async remember(msisdn: string, s: LiveStatus, connector: string, now: number): Promise<void> {
    await saveNumberLookup(this.store.db, {
      msisdn,
      valid: int(s.valid),
      reachable: int(s.reachable),
      ported: int(s.ported),
      roaming: int(s.roaming),
      current_mcc_mnc: s.currentNetwork?.mccMnc ?? null,
      current_network: s.currentNetwork?.name ?? null,
      original_mcc_mnc: s.originalNetwork?.mccMnc ?? null,
      original_network: s.originalNetwork?.name ?? null,
      connector,
      looked_up_at: now,
      expires_at: now + this.opts.cacheDays * DAY_MS,
    });
  }

  private async charge(channel: Channel, numbers: readonly NumberLookup[], now: number): Promise<void> {
    if (numbers.length === 0) return;
    const prices = await this.priceList();
    const day = utcDay(now);
    const rollups = new RollupBatch();
    let total = 0;
    for (const number of numbers) {
      const price = prices.unitPrice('LOOKUP', number.isoCountryCode, 'LOOKUP') ?? 0;
      total += price;
      rollups.add(
        {
          organisationId: channel.organisationId,
          channelId: channel.id,
          channelType: 'LOOKUP',
          day,
          status: 'DONE',
          mccMnc: number.mccMnc ?? '',
          priceKind: 'LOOKUP',
        },
        1,
        1,
        price,
      );
    }
    const description = numbers.length === 1 ? `Number lookup of ${numbers[0]!.msisdn}` : `Number lookup of ${numbers.length} numbers`;

    // inTransaction retries a deadlock (PostgreSQL): the batch is written again whole on each attempt.
    await inTransaction(this.store, async (trx) => {
      if (total > 0) {
        const org = await findOrganisationBilling(trx, channel.organisationId);
        if (!org) fail('NOT_FOUND', `organisation ${channel.organisationId} not found`);
        const payer = org.parent_billing === 1 && org.parent_id !== null ? org.parent_id : channel.organisationId;
        const entry = await applyBalanceChange(trx, {
          organisationId: payer,
          amount: -total,
          kind: 'CHARGE',
          description,
          at: now,
        });
        if (!entry) {
          const what = numbers.length === 1 ? 'this lookup costs' : `these ${numbers.length} lookups cost`;
          const whose = payer === channel.organisationId ? 'the organisation' : 'the parent organisation that pays for it';
          fail('INSUFFICIENT_FUNDS', `${what} ${toEuros(total)} EUR, more than the balance of ${whose} (${payer}); nothing was charged`);
        }
      }
      await rollups.write(trx, now, { balanceHeld: total > 0 });
    });
  }

  // Read on every request, so a price the operator changes applies at once on every node. The shipped list
  // applies until the table is seeded.
  private async priceList(): Promise<PriceList> {
    const entries = await loadPrices(this.store.db);
    return new PriceList(entries.length > 0 ? entries : DEFAULT_PRICES);
  }
}

function merge(number: NumberLookup, live: LiveStatus): LookupAnswer {
  return { ...number, ...live, valid: live.valid ?? number.valid };
}

const int = (b: boolean | null): number | null => (b === null ? null : b ? 1 : 0);
const bool = (n: number | null): boolean | null => (n === null ? null : Number(n) === 1);

function parseInput(input: string, defaultCountry: CountryCode | null): string | CoreError {
  const normalised = normaliseMsisdn(input, defaultCountry ? { defaultCountry } : {});
  if (normalised.ok) return normalised.msisdn;
  return new CoreError('INVALID_PHONE_NUMBER', `"${clip(input)}" ${REJECTION_DETAIL[normalised.reason]}`);
}

function clip(text: string): string {
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}

export async function mapWithConcurrency<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R> | R): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
