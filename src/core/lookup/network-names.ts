// Reverse of the operator match: what country and network an MCC/MNC stands for, from mcc-mnc-list. Consumption
// items only keep the mccMnc of their messages; this names it.
import { countryName } from '../../domain/phone.ts';
import type { NetworkLookup } from './enrich.ts';
import type { OperatorRecord } from './operator-match.ts';

let byCode: Promise<ReadonlyMap<string, NetworkLookup>> | undefined;

function rank(r: OperatorRecord): number {
  if (r.status === 'Operational') return 0;
  return r.status === null ? 1 : 2;
}

/** mcc+mnc → names; when a code is listed more than once, an operational entry wins over a withdrawn one. */
export function indexNetworkNames(records: Iterable<OperatorRecord>): Map<string, NetworkLookup> {
  const best = new Map<string, OperatorRecord>();
  for (const r of records) {
    const code = r.mcc + r.mnc;
    const current = best.get(code);
    if (!current || rank(r) < rank(current)) best.set(code, r);
  }
  const out = new Map<string, NetworkLookup>();
  for (const [code, r] of best) {
    const iso = r.countryCode?.split('/')[0]?.trim() ?? '';
    out.set(code, { mccMnc: code, country: iso === '' ? null : countryName(iso), network: r.brand ?? r.operator ?? null });
  }
  return out;
}

function networkNames(): Promise<ReadonlyMap<string, NetworkLookup>> {
  byCode ??= import('mcc-mnc-list').then(
    (list) => indexNetworkNames(list.all() as OperatorRecord[]),
    (error: unknown) => {
      byCode = undefined;
      throw error;
    },
  );
  return byCode;
}

/**
 * `{mccMnc, country, network}` for an MCC/MNC such as "20801" (→ France, Orange); an unknown code keeps its
 * mccMnc with null names, and an empty one (the network was never known) gives all nulls.
 */
export async function networkByMccMnc(mccMnc: string): Promise<NetworkLookup> {
  if (mccMnc === '') return { mccMnc: null, country: null, network: null };
  return (await networkNames()).get(mccMnc) ?? { mccMnc, country: null, network: null };
}
