import type { PriceEntry } from './default-prices.ts';

/** Price list lookups: the destination country's entry, else the `*` entry of the same channel type and kind. */
export class PriceList {
  private readonly byKey = new Map<string, number>();

  constructor(entries: readonly PriceEntry[]) {
    for (const e of entries) this.byKey.set(key(e.channelType, e.country, e.kind), e.amount);
  }

  /** Micro-euros per unit, or null when neither the country nor `*` is priced. */
  unitPrice(channelType: string, country: string | null, kind: string): number | null {
    if (country) {
      const exact = this.byKey.get(key(channelType, country, kind));
      if (exact !== undefined) return exact;
    }
    return this.byKey.get(key(channelType, '*', kind)) ?? null;
  }

  entries(): PriceEntry[] {
    return [...this.byKey].map(([k, amount]) => {
      const [channelType, country, kind] = k.split('|') as [PriceEntry['channelType'], string, string];
      return { channelType, country, kind, amount };
    });
  }
}

function key(channelType: string, country: string, kind: string): string {
  return `${channelType}|${country}|${kind}`;
}
