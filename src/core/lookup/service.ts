// Number lookup as a billed use case: the static description (libphonenumber, Google's carrier data, MCC/MNC list),
// the live part from the operator network, and the charge: one ledger row and the consumption rollups, in one
// transaction per request.
import type { NumberStatusProvider, LiveStatus } from './number-status.ts';
import { UNKNOWN_LIVE_STATUS } from './number-status.ts';
import { DEFAULT_PRICES } from '../domain/default-prices.ts';
import { toEuros } from '../domain/money.ts';
import { normaliseMsisdn, type MsisdnRejection } from '../domain/phone.ts';
import { PriceList } from '../domain/pricing.ts';
import { lookupNumber, type NumberLookup } from './enrich.ts';
import type { Channel } from '../../store/channels.ts';
import { inTransaction, type Store } from '../../store/db.ts';
import { applyBalanceChange } from '../../store/ledger.ts';
import { findOrganisationBilling } from '../../store/organisations.ts';
import { loadPrices } from '../../store/prices.ts';
import { RollupBatch } from '../../store/rollups.ts';
import { fail, CoreError } from '../errors.ts';
import { utcDay } from '../domain/dates.ts';

/** What a lookup answers: the static description and the live part, `null` wherever unknown. */
export type LookupAnswer = NumberLookup & LiveStatus;

export type BulkLookupItem = { input: string; answer: LookupAnswer } | { input: string; error: CoreError };

export const MAX_BULK_LOOKUPS = 1_000;

/** How many live queries one bulk request keeps in flight at once. */
const LIVE_QUERY_CONCURRENCY = 16;

const REJECTION_DETAIL: Record<MsisdnRejection, string> = {
  EMPTY: 'is empty',
  NOT_DIGITS: 'is not a phone number: send digits in international form, e.g. 33612345678 or +33 6 12 34 56 78',
  TOO_SHORT: 'is too short for a phone number',
  TOO_LONG: 'is longer than the 15 digits of an international number',
  NATIONAL_WITHOUT_COUNTRY: 'is a national number: send it in international form with its country code, e.g. 33612345678',
};

/**
 * Charging rule: every input that has the form of a phone number (it normalises to an MSISDN) is one query and is
 * charged, valid or not, as a real provider does. Input that is not a phone number at all is refused before any
 * query and costs nothing.
 */
export class LookupService {
  constructor(
    private readonly store: Store,
    private readonly numberStatus: NumberStatusProvider,
  ) {}

  /**
   * Looks one number up and charges it to the channel's organisation (its parent when billed by the parent).
   * Throws INVALID_PHONE_NUMBER (nothing charged) or INSUFFICIENT_FUNDS (nothing charged).
   */
  async lookup(channel: Channel, input: string, now = Date.now()): Promise<LookupAnswer> {
    const msisdn = parseInput(input);
    if (msisdn instanceof CoreError) throw msisdn;
    const number = await lookupNumber(msisdn);
    await this.charge(channel, [number], now);
    return { ...number, ...(await this.live(number)) };
  }

  /**
   * Looks up to MAX_BULK_LOOKUPS numbers up, answering in input order. An input that is no phone number is an
   * error of its item only (not charged); the others are charged together in one transaction, all or none.
   */
  async lookupMany(channel: Channel, inputs: readonly string[], now = Date.now()): Promise<BulkLookupItem[]> {
    if (inputs.length > MAX_BULK_LOOKUPS) {
      fail('INVALID_REQUEST', `at most ${MAX_BULK_LOOKUPS} numbers per request, got ${inputs.length}`);
    }
    const parsed = inputs.map(parseInput);
    const numbers = await Promise.all(parsed.map((p) => (p instanceof CoreError ? null : lookupNumber(p))));
    const charged = numbers.filter((n): n is NumberLookup => n !== null);
    await this.charge(channel, charged, now);
    const live = await mapWithConcurrency(numbers, LIVE_QUERY_CONCURRENCY, (n) => (n === null ? null : this.live(n)));
    return inputs.map((input, i) => {
      const number = numbers[i];
      const status = live[i];
      if (!number || !status) return { input, error: parsed[i] as CoreError };
      return { input, answer: { ...number, ...status } };
    });
  }

  // The charge is taken before the live query: a failed network query still answers the static part, with nulls.
  private async live(number: NumberLookup): Promise<LiveStatus> {
    try {
      return await this.numberStatus.liveStatus(number);
    } catch {
      return UNKNOWN_LIVE_STATUS;
    }
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
    const description =
      numbers.length === 1 ? `Number lookup of ${numbers[0]!.msisdn}` : `Number lookup of ${numbers.length} numbers`;

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

function parseInput(input: string): string | CoreError {
  const normalised = normaliseMsisdn(input);
  if (normalised.ok) return normalised.msisdn;
  return new CoreError('INVALID_PHONE_NUMBER', `"${clip(input)}" ${REJECTION_DETAIL[normalised.reason]}`);
}

function clip(text: string): string {
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}

async function mapWithConcurrency<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R> | R): Promise<R[]> {
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
