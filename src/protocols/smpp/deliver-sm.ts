import { formatReceiptText, messageState, type ReceiptStat } from './receipt.ts';
import { encodeGsm7, type TextEncoding } from '../../domain/text.ts';
import { splitForSmpp } from './udh.ts';
import type { SmppAddress } from './submit.ts';

/** deliver_sm body fields as the `smpp` package encodes them (mandatory parameters and TLVs by name). */
export interface DeliverSmFields {
  service_type?: string;
  source_addr_ton: number;
  source_addr_npi: number;
  source_addr: string;
  dest_addr_ton: number;
  dest_addr_npi: number;
  destination_addr: string;
  esm_class: number;
  data_coding: number;
  short_message: Buffer;
  receipted_message_id?: string;
  message_state?: number;
  [tlv: string]: unknown;
}

const ESM_CLASS_RECEIPT = 0x04;
const ESM_CLASS_UDHI = 0x40;

type Address = SmppAddress | string;

function address(a: Address): SmppAddress {
  // A bare number is international (TON 1, NPI 1) when it is all digits, else alphanumeric (TON 5, NPI 0).
  if (typeof a !== 'string') return a;
  return /^\d+$/.test(a) ? { addr: a, ton: 1, npi: 1 } : { addr: a, ton: 5, npi: 0 };
}

function addresses(source: Address, destination: Address) {
  const s = address(source);
  const d = address(destination);
  return {
    source_addr_ton: s.ton,
    source_addr_npi: s.npi,
    source_addr: s.addr,
    dest_addr_ton: d.ton,
    dest_addr_npi: d.npi,
    destination_addr: d.addr,
  };
}

export interface ReceiptDeliverInput {
  messageId: string;
  /** The original message's destination (the handset): the receipt comes from it. */
  source: Address;
  /** The original message's source: the receipt goes back to it. */
  destination: Address;
  stat: ReceiptStat;
  err?: number | string;
  submitDate: Date;
  doneDate: Date;
  /** The original text; the receipt shows its first 20 characters. */
  text?: string;
  sub?: number;
  dlvrd?: number;
}

/**
 * The deliver_sm that carries a delivery receipt: esm_class 0x04, the standard receipt text in GSM 7-bit
 * (data_coding 0; characters outside GSM become '?'), and the receipted_message_id and message_state TLVs.
 */
export function buildReceiptDeliverSm(r: ReceiptDeliverInput): DeliverSmFields {
  const text = formatReceiptText({
    id: r.messageId,
    stat: r.stat,
    submitDate: r.submitDate,
    doneDate: r.doneDate,
    ...(r.err !== undefined && { err: r.err }),
    ...(r.text !== undefined && { text: r.text }),
    ...(r.sub !== undefined && { sub: r.sub }),
    ...(r.dlvrd !== undefined && { dlvrd: r.dlvrd }),
  });
  return {
    ...addresses(r.source, r.destination),
    esm_class: ESM_CLASS_RECEIPT,
    data_coding: 0,
    short_message: encodeGsm7(text),
    receipted_message_id: r.messageId,
    message_state: messageState(r.stat),
  };
}

export interface MoDeliverInput {
  /** The handset that sent the message. */
  source: Address;
  /** The customer's number or short code it was sent to. */
  destination: Address;
  text: string;
  /** Concatenation reference for a long text (low 8 bits used). */
  ref: number;
  encoding?: TextEncoding;
}

/**
 * The deliver_sm(s) that carry a mobile-originated message: esm_class 0, GSM 7-bit or UCS-2; a text longer than
 * one part is split with an 8-bit concatenation UDH (esm_class 0x40). Send them in order over one session.
 */
export function buildMoDeliverSms(mo: MoDeliverInput): DeliverSmFields[] {
  const base = addresses(mo.source, mo.destination);
  return splitForSmpp(mo.text, mo.encoding, mo.ref).map((part) => ({
    ...base,
    esm_class: part.udh ? ESM_CLASS_UDHI : 0,
    data_coding: part.dataCoding,
    short_message: part.udh ? Buffer.concat([part.udh, part.bytes]) : part.bytes,
  }));
}
