import type { SmppAddress } from './submit.ts';

/**
 * TON/NPI of an address as SMPP peers expect them: a full international number (7 digits or more) is TON 1 NPI 1
 * (ESMEs such as Kannel show it with a +), a shorter all-digit number is a short code (TON 3, network specific),
 * anything else is alphanumeric (TON 5, NPI 0).
 */
export function smppAddressOf(value: string): SmppAddress {
  if (/^\d{7,}$/.test(value)) return { addr: value, ton: 1, npi: 1 };
  if (/^\d+$/.test(value)) return { addr: value, ton: 3, npi: 0 };
  return { addr: value, ton: 5, npi: 0 };
}
