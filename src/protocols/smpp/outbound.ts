/**
 * The submit_sm PDUs that carry a text to an SMSC: the alphabet the operator wants (data_coding), and a long text
 * as the operator takes it — parts with an 8- or 16-bit concatenation UDH, parts tied by the sar_* TLVs, or the
 * whole text in one message_payload.
 */
import { encodeGsm7, encodeUcs2, gsm7Length } from '../../domain/text.ts';
import type { SmppAddress } from './submit.ts';
import { buildConcatUdh } from './udh.ts';

export type LongMessageMode = 'UDH8' | 'UDH16' | 'SAR' | 'PAYLOAD';
export const LONG_MESSAGE_MODES: readonly LongMessageMode[] = ['UDH8', 'UDH16', 'SAR', 'PAYLOAD'];

/** data_coding for texts GSM-7 can carry: 0 SMSC default alphabet (GSM 03.38, one septet an octet), 1 IA5 (ASCII), 3 Latin-1. */
export type TextDataCoding = 0 | 1 | 3;
export const TEXT_DATA_CODINGS: readonly TextDataCoding[] = [0, 1, 3];

export interface OutboundSmsOptions {
  serviceType: string;
  source: SmppAddress;
  destination: SmppAddress;
  textDataCoding: TextDataCoding;
  /** The text is sent as UCS-2 whatever it holds (the message asked for UNICODE). */
  forceUnicode: boolean;
  longMessages: LongMessageMode;
  registeredDelivery: number;
  /** SMPP time, or '' for the SMSC's default validity. */
  validityPeriod: string;
  /** Concatenation reference (16 bits; the low 8 for UDH8). Keep it the same for every placement of one message. */
  reference: number;
}

interface Alphabet {
  dataCoding: number;
  encode(text: string): Buffer;
  /** Units a UTF-16 code unit takes (septets, octets or UCS-2 characters). */
  width(unit: number): number;
  /** Units in a lone part, and in a part beside an 8-bit or 16-bit concatenation UDH (or sar_*, where the SMSC adds one). */
  single: number;
  udh8: number;
  udh16: number;
}

const GSM: Alphabet = {
  dataCoding: 0,
  encode: encodeGsm7,
  width: (unit) => gsm7Length(String.fromCharCode(unit)),
  single: 160,
  udh8: 153,
  udh16: 152,
};

function octets(dataCoding: number, max: number): Alphabet {
  return { dataCoding, encode: (t) => Buffer.from(t, 'latin1'), width: (unit) => (unit <= max ? 1 : -1), single: 140, udh8: 134, udh16: 133 };
}

const IA5 = octets(1, 0x7f);
const LATIN1 = octets(3, 0xff);
const UCS2: Alphabet = { dataCoding: 8, encode: encodeUcs2, width: () => 1, single: 70, udh8: 67, udh16: 66 };

function fits(text: string, a: Alphabet): boolean {
  for (let i = 0; i < text.length; i++) if (a.width(text.charCodeAt(i)) < 0) return false;
  return true;
}

function alphabetFor(text: string, o: Pick<OutboundSmsOptions, 'textDataCoding' | 'forceUnicode'>): Alphabet {
  if (o.forceUnicode) return UCS2;
  const wanted = o.textDataCoding === 0 ? GSM : o.textDataCoding === 1 ? IA5 : LATIN1;
  return fits(text, wanted) ? wanted : UCS2;
}

const isHigh = (u: number) => u >= 0xd800 && u <= 0xdbff;

/** Splits a text into parts of at most `max` units, never between an escape pair or the halves of a surrogate pair. */
export function splitUnits(text: string, a: Pick<Alphabet, 'width'>, max: number): string[] {
  const parts: string[] = [];
  let start = 0;
  let used = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    const w = a.width(unit) + (isHigh(unit) && i + 1 < text.length ? a.width(text.charCodeAt(i + 1)) : 0);
    if (used + w > max && i > start) {
      parts.push(text.slice(start, i));
      start = i;
      used = 0;
    }
    used += w;
    if (isHigh(unit) && i + 1 < text.length) i++;
  }
  parts.push(text.slice(start));
  return parts;
}

const ESM_CLASS_UDHI = 0x40;
const MAX_PARTS = 255;

/** The submit_sm fields (in order) that carry `text`; throws a RangeError for a text of more than 255 parts. */
export function buildSubmitSms(text: string, o: OutboundSmsOptions): Array<Record<string, unknown>> {
  const a = alphabetFor(text, o);
  const base = {
    service_type: o.serviceType,
    source_addr_ton: o.source.ton,
    source_addr_npi: o.source.npi,
    source_addr: o.source.addr,
    dest_addr_ton: o.destination.ton,
    dest_addr_npi: o.destination.npi,
    destination_addr: o.destination.addr,
    esm_class: 0,
    protocol_id: 0,
    priority_flag: 0,
    schedule_delivery_time: '',
    validity_period: o.validityPeriod,
    registered_delivery: o.registeredDelivery,
    replace_if_present_flag: 0,
    data_coding: a.dataCoding,
    sm_default_msg_id: 0,
  };
  const units = (() => {
    let n = 0;
    for (let i = 0; i < text.length; i++) n += a.width(text.charCodeAt(i));
    return n;
  })();
  if (units <= a.single) return [{ ...base, short_message: a.encode(text) }];
  if (o.longMessages === 'PAYLOAD') return [{ ...base, short_message: Buffer.alloc(0), message_payload: a.encode(text) }];
  const parts = splitUnits(text, a, o.longMessages === 'UDH8' ? a.udh8 : a.udh16);
  if (parts.length > MAX_PARTS) throw new RangeError(`the text needs ${parts.length} parts; SMPP concatenation numbers at most ${MAX_PARTS}`);
  const total = parts.length;
  return parts.map((part, i) => {
    const bytes = a.encode(part);
    if (o.longMessages === 'SAR') {
      return { ...base, short_message: bytes, sar_msg_ref_num: o.reference & 0xffff, sar_total_segments: total, sar_segment_seqnum: i + 1 };
    }
    const wide = o.longMessages === 'UDH16';
    const udh = buildConcatUdh(wide ? o.reference & 0xffff : o.reference & 0xff, total, i + 1, wide);
    return { ...base, esm_class: ESM_CLASS_UDHI, short_message: Buffer.concat([udh, bytes]) };
  });
}
