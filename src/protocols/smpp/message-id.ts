/**
 * Message ids as SMSCs write them. The same id often reads differently in a submit_sm_resp and in the receipt that
 * reports on it: hexadecimal in one and decimal in the other, upper case here and lower case there, with or without
 * leading zeros — the classic cause of unmatched receipts in Kannel and Jasmin. Each side is normalised by how the
 * operator writes it, so both reduce to one form and compare equal.
 */
export type MessageIdFormat = 'ASIS' | 'HEX' | 'DECIMAL';

export const MESSAGE_ID_FORMATS: readonly MessageIdFormat[] = ['ASIS', 'HEX', 'DECIMAL'];

/**
 * `HEX` and `DECIMAL` ids become their number in decimal (any length: BigInt); `ASIS` ids, and ids that do not read
 * in the format given, are trimmed, lower-cased and lose their leading zeros.
 */
export function normaliseMessageId(id: string, format: MessageIdFormat): string {
  const t = id.trim();
  if (format === 'HEX') {
    const digits = t.replace(/^0x/i, '');
    if (/^[0-9a-f]+$/i.test(digits)) return BigInt(`0x${digits}`).toString(10);
  } else if (format === 'DECIMAL') {
    if (/^[0-9]+$/.test(t)) return BigInt(t).toString(10);
  }
  return t.toLowerCase().replace(/^0+(?=.)/, '');
}
