import { parseSmppTime, SmppTimeError } from './receipt.ts';
import { parseUdh, UdhError } from './udh.ts';
import type { ConcatRef } from './concat.ts';
import { buf, num, optNum, SmppStatus, str, type DestAddress, type Pdu } from './pdu.ts';

export interface SmppAddress {
  addr: string;
  ton: number;
  npi: number;
}

/** A submitted message as the messaging service sees it: decoded, reassembled, with plain dates. */
export interface SmppSubmit {
  /** Set when Tern allocated the id before the message was whole (concatenated input): use it. */
  messageId?: string;
  serviceType: string;
  source: SmppAddress;
  destination: SmppAddress;
  text: string;
  /** data_coding of the (first) part as received: 0 GSM 7-bit, 1 IA5, 3 Latin-1, 8 UCS-2, … */
  dataCoding: number;
  esmClass: number;
  registeredDelivery: number;
  /** An SMSC delivery receipt is asked for (registered_delivery bits 0–1: 1 always, 2 on failure only). */
  receiptRequested: boolean;
  receiptOnFailureOnly: boolean;
  /** registered_delivery bit 4 (Kannel's 0x11 sets it along with bit 0). */
  intermediateNotification: boolean;
  protocolId: number;
  priority: number;
  scheduleAt: Date | null;
  validUntil: Date | null;
  /** SMPP parts the message arrived in. */
  parts: number;
}

export type SubmitFields = Omit<SmppSubmit, 'text' | 'parts' | 'messageId' | 'destination'>;

export interface DecodedSubmit {
  fields: SubmitFields;
  /** User data without UDH: short_message, or message_payload when that TLV is present. */
  payload: Buffer;
  concat?: ConcatRef;
}

export type DecodeSubmitResult = { ok: true; submit: DecodedSubmit } | { ok: false; status: number; reason: string };

const UDHI = 0x40;

/**
 * The parts of submit_sm, submit_multi and replace_sm shared by all destinations: text bytes, UDH or sar_*
 * concatenation, flags and times. Errors come back as the command_status to answer with. A concatenation UDH
 * numbered impossibly is an error (`strictConcat`, the default), or read as a plain message where being lenient is
 * safer (what an operator hands over).
 */
export function decodeSubmit(pdu: Pdu, now: Date, opts: { strictConcat?: boolean } = {}): DecodeSubmitResult {
  const esmClass = num(pdu, 'esm_class');
  const shortMessage = buf(pdu, 'short_message') ?? Buffer.alloc(0);
  const messagePayload = buf(pdu, 'message_payload');
  if (messagePayload && messagePayload.length > 0 && shortMessage.length > 0) {
    return { ok: false, status: SmppStatus.ESME_RINVMSGLEN, reason: 'both short_message and message_payload are set' };
  }
  let data = messagePayload && messagePayload.length > 0 ? messagePayload : shortMessage;
  let concat: ConcatRef | undefined;
  if (esmClass & UDHI) {
    try {
      const udh = parseUdh(data);
      if (udh.invalidConcat && !udh.concat && opts.strictConcat !== false) {
        return { ok: false, status: SmppStatus.ESME_RINVMSGLEN, reason: 'a concatenation UDH numbered 0, or past its total' };
      }
      if (udh.concat) concat = { ref: udh.concat.ref, total: udh.concat.total, seq: udh.concat.seq };
      data = data.subarray(udh.headerLength);
    } catch (e) {
      if (e instanceof UdhError) return { ok: false, status: SmppStatus.ESME_RINVMSGLEN, reason: e.message };
      throw e;
    }
  }
  const sarRef = optNum(pdu, 'sar_msg_ref_num');
  const sarTotal = optNum(pdu, 'sar_total_segments');
  const sarSeq = optNum(pdu, 'sar_segment_seqnum');
  if (!concat && (sarRef !== undefined || sarTotal !== undefined || sarSeq !== undefined)) {
    if (sarRef === undefined || sarTotal === undefined || sarSeq === undefined) {
      return { ok: false, status: SmppStatus.ESME_RMISSINGOPTPARAM, reason: 'sar_* TLVs must come as a set of three' };
    }
    if (sarTotal < 1 || sarSeq < 1 || sarSeq > sarTotal) {
      return { ok: false, status: SmppStatus.ESME_RINVOPTPARAMVAL, reason: `sar segment ${sarSeq} of ${sarTotal}` };
    }
    concat = { ref: sarRef, total: sarTotal, seq: sarSeq };
  }
  let scheduleAt: Date | null;
  let validUntil: Date | null;
  try {
    scheduleAt = parseSmppTime(str(pdu, 'schedule_delivery_time'), now);
  } catch (e) {
    if (e instanceof SmppTimeError) return { ok: false, status: SmppStatus.ESME_RINVSCHED, reason: e.message };
    throw e;
  }
  try {
    validUntil = parseSmppTime(str(pdu, 'validity_period'), now);
  } catch (e) {
    if (e instanceof SmppTimeError) return { ok: false, status: SmppStatus.ESME_RINVEXPIRY, reason: e.message };
    throw e;
  }
  const registeredDelivery = num(pdu, 'registered_delivery');
  const receipt = registeredDelivery & 0x03;
  const fields: SubmitFields = {
    serviceType: str(pdu, 'service_type'),
    source: { addr: str(pdu, 'source_addr'), ton: num(pdu, 'source_addr_ton'), npi: num(pdu, 'source_addr_npi') },
    dataCoding: num(pdu, 'data_coding'),
    esmClass,
    registeredDelivery,
    receiptRequested: receipt === 1 || receipt === 2,
    receiptOnFailureOnly: receipt === 2,
    intermediateNotification: (registeredDelivery & 0x10) !== 0,
    protocolId: num(pdu, 'protocol_id'),
    priority: num(pdu, 'priority_flag'),
    scheduleAt,
    validUntil,
  };
  const submit: DecodedSubmit = { fields, payload: data };
  if (concat && concat.total > 1) submit.concat = concat;
  return { ok: true, submit };
}

export function destinationOf(pdu: Pdu): SmppAddress {
  return { addr: str(pdu, 'destination_addr'), ton: num(pdu, 'dest_addr_ton'), npi: num(pdu, 'dest_addr_npi') };
}

export function multiDestinations(pdu: Pdu): DestAddress[] {
  const v = pdu.fields['dest_address'];
  return Array.isArray(v) ? (v as DestAddress[]) : [];
}
