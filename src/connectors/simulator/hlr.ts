// The simulator's answer to an HLR query: deterministic by the number's last digits, so tests and demos can ask
// for an absent or a ported subscriber. Rules (README "Simulator test numbers — lookup"):
//   - only valid mobile (and pager) numbers are known to the network; anything else answers nulls;
//   - ending in 555: not reachable (absent subscriber), not ported;
//   - ending in 777: ported to another operator of the same country, when Google's data knows one;
//   - any other ending: reachable, not ported, served by the operator its range was allocated to.
// The endings stay clear of the SMS outcome numbers (…0001–…0004) and the RCS non-capable ones (…9).
import { Cache } from '../../core/cache.ts';
import { carrierPrefixTable } from '../../core/lookup/carrier-prefixes.ts';
import { lookupNumber, networkMccMnc, type NumberLookup } from '../../core/lookup/enrich.ts';
import { type LiveStatus, UNKNOWN_LIVE_STATUS } from '../../core/lookup/number-status.ts';

export const UNREACHABLE_ENDING = '555';
export const PORTED_ENDING = '777';

// Bounds the search for another operator: candidates are tried largest first and one usually answers at once.
const MAX_CANDIDATE_NETWORKS = 12;
const MAX_PREFIXES_PER_NETWORK = 24;

interface NetworkRanges {
  name: string;
  prefixes: string[];
}

export class SimulatorHlr {
  private readonly rangesByCallingCode = new Map<string, Promise<NetworkRanges[]>>();
  private readonly portedTo = new Cache<string, Promise<string | null>>({ capacity: 1_000 });

  async liveStatus(number: NumberLookup): Promise<LiveStatus> {
    if (!number.valid || (number.type !== 'MOBILE' && number.type !== 'PAGER')) return UNKNOWN_LIVE_STATUS;
    const { msisdn, network, mccMnc } = number;
    const original = network === null ? null : { mccMnc, name: network };
    const answer = { valid: true, roaming: false, originalNetwork: original };
    if (msisdn.endsWith(UNREACHABLE_ENDING)) return { ...answer, reachable: false, ported: false, currentNetwork: original };
    if (msisdn.endsWith(PORTED_ENDING)) {
      const other = await this.otherNetwork(number);
      if (other !== null && number.isoCountryCode !== null) {
        return { ...answer, reachable: true, ported: true, currentNetwork: { mccMnc: await networkMccMnc(number.isoCountryCode, other), name: other } };
      }
    }
    return { ...answer, reachable: true, ported: false, currentNetwork: original };
  }

  /** Another operator of the number's country: the one with the most ranges in Google's data, checked by lookup. */
  private otherNetwork(number: NumberLookup): Promise<string | null> {
    let answer = this.portedTo.get(number.msisdn);
    if (!answer) {
      answer = this.findOtherNetwork(number);
      this.portedTo.set(number.msisdn, answer);
      answer.catch(() => this.portedTo.delete(number.msisdn));
    }
    return answer;
  }

  private async findOtherNetwork(number: NumberLookup): Promise<string | null> {
    const { msisdn, countryPrefix, isoCountryCode, network } = number;
    if (network === null || countryPrefix === null || isoCountryCode === null) return null;
    const national = msisdn.slice(countryPrefix.length);
    const candidates = (await this.networkRanges(countryPrefix)).filter((n) => n.name !== network);
    for (const candidate of candidates.slice(0, MAX_CANDIDATE_NETWORKS)) {
      // A calling code can be shared (+1, +7, +44…): the candidate must name a valid mobile of the same country.
      // Ranges nearest the number (same area code first) are tried first.
      const prefixes = candidate.prefixes
        .filter((p) => p.length < national.length)
        .map((p) => ({ p, shared: sharedLeadingDigits(p, national) }))
        .sort((a, b) => b.shared - a.shared || (a.p < b.p ? -1 : a.p > b.p ? 1 : 0))
        .slice(0, MAX_PREFIXES_PER_NETWORK)
        .map(({ p }) => p);
      for (const prefix of prefixes) {
        const sibling = await lookupNumber(countryPrefix + prefix + national.slice(prefix.length));
        if (sibling.valid && sibling.isoCountryCode === isoCountryCode && sibling.network === candidate.name) {
          return candidate.name;
        }
      }
    }
    return null;
  }

  private networkRanges(countryCallingCode: string): Promise<NetworkRanges[]> {
    let ranges = this.rangesByCallingCode.get(countryCallingCode);
    if (!ranges) {
      ranges = carrierPrefixTable(countryCallingCode).then((table) => {
        const byName = new Map<string, string[]>();
        for (const [prefix, name] of table) {
          const list = byName.get(name);
          if (list) list.push(prefix);
          else byName.set(name, [prefix]);
        }
        return [...byName]
          .map(([name, prefixes]) => ({ name, prefixes: prefixes.sort() }))
          .sort((a, b) => b.prefixes.length - a.prefixes.length || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      });
      this.rangesByCallingCode.set(countryCallingCode, ranges);
      ranges.catch(() => this.rangesByCallingCode.delete(countryCallingCode));
    }
    return ranges;
  }
}

function sharedLeadingDigits(a: string, b: string): number {
  let n = 0;
  while (n < a.length && n < b.length && a[n] === b[n]) n++;
  return n;
}
