/**
 * What an SMSC hands an ESME in a deliver_sm (or data_sm): a delivery receipt (the standard text and/or the
 * receipted_message_id and message_state TLVs) or a mobile-originated message, perhaps one part of a long one.
 */
import type { ConcatRef } from './concat.ts';
import { buf, num, optNum, type Pdu, SmppStatus, str } from './pdu.ts';
import { parseReceiptText, statForMessageState } from './receipt.ts';
import { decodeSubmit, destinationOf, type SmppAddress } from './submit.ts';

export type DeliverContent =
  | {
      kind: 'receipt';
      /** The id of the message reported on, as the SMSC wrote it. */
      id: string;
      /** The `stat:` word (upper case; message_state when the TLV is there). */
      stat: string;
      err: string | null;
      doneDate: Date | null;
    }
  | { kind: 'mo'; source: SmppAddress; destination: SmppAddress; dataCoding: number; payload: Buffer; concat?: ConcatRef }
  /** Cannot be read: answer with `status`. */
  | { kind: 'invalid'; status: number; reason: string };

/** esm_class message type bits (2–5): SMSC delivery receipt, SME delivery or manual acknowledgement, intermediate notification. */
const RECEIPT_TYPES = new Set([0x04, 0x08, 0x10, 0x20]);

function isReceipt(pdu: Pdu): boolean {
  return RECEIPT_TYPES.has(num(pdu, 'esm_class') & 0x3c) || str(pdu, 'receipted_message_id') !== '';
}

/** network_error_code: network type octet then a 16-bit code; shown as the code. */
function networkError(pdu: Pdu): string | null {
  const v = buf(pdu, 'network_error_code');
  return v && v.length === 3 ? String(v.readUInt16BE(1)) : null;
}

export function readDeliverSm(pdu: Pdu, now: Date = new Date()): DeliverContent {
  if (isReceipt(pdu)) {
    const payload = buf(pdu, 'message_payload');
    const bytes = payload && payload.length > 0 ? payload : (buf(pdu, 'short_message') ?? Buffer.alloc(0));
    const text = parseReceiptText(bytes.toString('latin1'));
    const id = str(pdu, 'receipted_message_id') || text?.id || '';
    if (id === '') return { kind: 'invalid', status: SmppStatus.ESME_RINVMSGID, reason: 'a receipt without the id of the message it reports on' };
    const state = optNum(pdu, 'message_state');
    const stat = state !== undefined ? statForMessageState(state) : text?.stat;
    if (!stat) return { kind: 'invalid', status: SmppStatus.ESME_RMISSINGOPTPARAM, reason: 'a receipt without stat: or message_state' };
    return { kind: 'receipt', id, stat, err: text?.err ?? networkError(pdu), doneDate: text?.doneDate ?? null };
  }
  // Lenient with what the operator hands over: a refusal would only have it sent again, and again.
  const decoded = decodeSubmit(pdu, now, { strictConcat: false });
  if (!decoded.ok) return { kind: 'invalid', status: decoded.status, reason: decoded.reason };
  const s = decoded.submit;
  return {
    kind: 'mo',
    source: s.fields.source,
    destination: destinationOf(pdu),
    dataCoding: s.fields.dataCoding,
    payload: s.payload,
    ...(s.concat && { concat: s.concat }),
  };
}
