import type { MessageStatus } from '../../domain/status.ts';
import { MESSAGE_STATE, type ReceiptStat } from '../../protocols/smpp/receipt.ts';

/**
 * How Tern's message statuses read on SMPP: the `stat:` of a delivery receipt, the message_state of a receipt or a
 * query_sm_resp, and the `err:` code a receipt carries.
 */

/**
 * The receipt `stat:` of a final status; null while the message is still on its way (SCHEDULED, ENROUTE) and for
 * READ, which follows a DELIVERED whose receipt already went out.
 */
export function receiptStatOf(status: MessageStatus, detail: string | null): ReceiptStat | null {
  switch (status) {
    case 'DELIVERED':
      return 'DELIVRD';
    case 'UNDELIVERED':
      return detail === 'EXPIRED' ? 'EXPIRED' : 'UNDELIV';
    case 'UNDELIVERABLE':
      return 'REJECTD';
    case 'CANCELLED':
      return 'DELETED';
    case 'SCHEDULED':
    case 'ENROUTE':
    case 'READ':
      return null;
  }
}

/** message_state (SMPP 3.4 §5.2.28) of a message in any status. */
export function messageStateOf(status: MessageStatus, detail: string | null): number {
  switch (status) {
    case 'SCHEDULED':
    case 'ENROUTE':
      return MESSAGE_STATE.ENROUTE;
    case 'DELIVERED':
    case 'READ':
      return MESSAGE_STATE.DELIVERED;
    case 'UNDELIVERED':
      return detail === 'EXPIRED' ? MESSAGE_STATE.EXPIRED : MESSAGE_STATE.UNDELIVERABLE;
    case 'UNDELIVERABLE':
      return MESSAGE_STATE.REJECTED;
    case 'CANCELLED':
      return MESSAGE_STATE.DELETED;
  }
}

/**
 * Whether a receipt goes out for a final `stat` under registered_delivery: bits 0–1 are 1 (every final outcome) or
 * 2 (failures only); 0 and 3 ask for none. The other bits (SME acknowledgements, intermediate notifications) do not
 * change it.
 */
export function receiptWanted(registeredDelivery: number, stat: ReceiptStat): boolean {
  const mode = registeredDelivery & 0x03;
  if (mode === 1) return true;
  if (mode === 2) return stat !== 'DELIVRD';
  return false;
}

/**
 * The receipt's `err:` field: 000 when delivered, else a code for the status detail. Tern's own codes, stable and
 * documented in the README; ESMEs generally log them and decide on `stat:`.
 */
const ERROR_CODES: Readonly<Record<string, number>> = {
  EXPIRED: 1,
  OPERATOR_ERROR: 2,
  REJECTED: 3,
  NOT_ROUTABLE: 4,
  INVALID_PHONE_NUMBER: 5,
  BLACKLISTED: 6,
  INSUFFICIENT_CREDIT: 7,
  DAILY_LIMIT_EXCEEDED: 8,
  ORGANISATION_MONTHLY_LIMIT_EXCEEDED: 9,
  SPAM: 10,
  CANCELLED_BY_USER: 11,
  COUNTRY_NOT_ALLOWED: 12,
  VELOCITY_LIMIT_EXCEEDED: 13,
  ROUTE_AT_LOSS: 14,
};

/** Any other failure. */
const OTHER_ERROR = 99;

export function receiptErrorCode(stat: ReceiptStat, detail: string | null): number {
  if (stat === 'DELIVRD') return 0;
  return (detail !== null && ERROR_CODES[detail]) || OTHER_ERROR;
}

export { smppAddressOf } from '../../protocols/smpp/address.ts';
