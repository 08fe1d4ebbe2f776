/**
 * The price list shipped with Tern, in micro-euros per billed unit (SMS part, RCS message by kind, started 30 s of
 * voice call, lookup). `*` is any destination country not listed. The operator replaces any entry through
 * `PUT /admin/v1/prices`.
 */
export interface PriceEntry {
  channelType: 'SMS' | 'RCS' | 'VOICE' | 'LOOKUP';
  country: string;
  kind: string;
  amount: number;
}

export const DEFAULT_PRICES: readonly PriceEntry[] = [
  { channelType: 'SMS', country: '*', kind: 'SMS', amount: 60_000 },
  { channelType: 'SMS', country: 'FR', kind: 'SMS', amount: 45_000 },
  { channelType: 'SMS', country: 'BE', kind: 'SMS', amount: 55_000 },
  { channelType: 'SMS', country: 'CH', kind: 'SMS', amount: 55_000 },
  { channelType: 'SMS', country: 'DE', kind: 'SMS', amount: 75_000 },
  { channelType: 'SMS', country: 'ES', kind: 'SMS', amount: 50_000 },
  { channelType: 'SMS', country: 'IT', kind: 'SMS', amount: 52_000 },
  { channelType: 'SMS', country: 'GB', kind: 'SMS', amount: 40_000 },
  { channelType: 'SMS', country: 'US', kind: 'SMS', amount: 9_000 },
  { channelType: 'RCS', country: '*', kind: 'BASIC', amount: 40_000 },
  { channelType: 'RCS', country: '*', kind: 'SINGLE', amount: 60_000 },
  { channelType: 'RCS', country: '*', kind: 'CONVERSATION', amount: 90_000 },
  { channelType: 'VOICE', country: '*', kind: 'VOICE', amount: 50_000 },
  { channelType: 'VOICE', country: 'FR', kind: 'VOICE', amount: 35_000 },
  { channelType: 'LOOKUP', country: '*', kind: 'LOOKUP', amount: 5_000 },
];
