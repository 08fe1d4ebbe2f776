import { LONG_MESSAGE_MODES, type LongMessageMode, TEXT_DATA_CODINGS, type TextDataCoding } from '../../protocols/smpp/outbound.ts';
import { MESSAGE_ID_FORMATS, type MessageIdFormat } from '../../protocols/smpp/message-id.ts';
import { wholeNumber } from '../kind.ts';

export type BindMode = 'TRX' | 'TX+RX';

/** An SMPP connector's settings, as stored (complete, with defaults filled in). */
export interface SmppConnectorSettings {
  host: string;
  port: number;
  tls: boolean;
  /** With TLS: check the SMSC's certificate against the system's CAs. */
  tlsVerify: boolean;
  systemId: string;
  systemType: string;
  bindMode: BindMode;
  /** Binds (TRX sessions, or TX+RX pairs) for the whole cluster, spread over its nodes. */
  binds: number;
  /** Submits in flight per bind before waiting for answers. */
  window: number;
  /** Submits a second (one per part) for the whole cluster; 0: no limit. */
  tps: number;
  enquireLinkSeconds: number;
  responseTimeoutSeconds: number;
  reconnectMinSeconds: number;
  reconnectMaxSeconds: number;
  /** After ESME_RTHROTTLED, how long the connector sends nothing (it is THROTTLED meanwhile). */
  throttleWaitMs: number;
  /** null: from the sender (alphanumeric TON 5 NPI 0, international TON 1 NPI 1, short code TON 3 NPI 0). */
  sourceTon: number | null;
  sourceNpi: number | null;
  destTon: number;
  destNpi: number;
  serviceType: string;
  /** data_coding for texts GSM-7 can carry (others go as UCS-2, 8). */
  dataCoding: TextDataCoding;
  longMessages: LongMessageMode;
  registeredDelivery: number;
  /** Send the message's validity as validity_period (absolute, UTC); otherwise the SMSC's default applies. */
  sendValidity: boolean;
  /** How the operator writes message ids in submit_sm_resp and in its receipts. */
  submitIdFormat: MessageIdFormat;
  receiptIdFormat: MessageIdFormat;
  /** How long the parts of a long inbound message are waited for; then what arrived is delivered. */
  moPartsTimeoutSeconds: number;
}

export const SMPP_SETTINGS: readonly string[] = [
  'host',
  'port',
  'tls',
  'tlsVerify',
  'systemId',
  'systemType',
  'bindMode',
  'binds',
  'window',
  'tps',
  'enquireLinkSeconds',
  'responseTimeoutSeconds',
  'reconnectMinSeconds',
  'reconnectMaxSeconds',
  'throttleWaitMs',
  'sourceTon',
  'sourceNpi',
  'destTon',
  'destNpi',
  'serviceType',
  'dataCoding',
  'longMessages',
  'registeredDelivery',
  'sendValidity',
  'submitIdFormat',
  'receiptIdFormat',
  'moPartsTimeoutSeconds',
];

type Fail = (field: string, reason: string) => never;

function text(s: Record<string, unknown>, field: string, fallback: string | undefined, max: number, invalid: Fail): string {
  const v = s[field];
  if (v === undefined && fallback !== undefined) return fallback;
  if (typeof v !== 'string') return invalid(field, fallback === undefined ? 'is required' : 'a string');
  // SMPP C-octet strings: printable ASCII, bounded.
  if (v.length > max || !/^[\x20-\x7e]*$/.test(v)) invalid(field, `at most ${max} printable ASCII characters`);
  return v;
}

function flag(s: Record<string, unknown>, field: string, fallback: boolean, invalid: Fail): boolean {
  const v = s[field];
  if (v === undefined) return fallback;
  if (typeof v !== 'boolean') invalid(field, 'true or false');
  return v as boolean;
}

function oneOf<T>(s: Record<string, unknown>, field: string, values: readonly T[], fallback: T, invalid: Fail): T {
  const v = s[field];
  if (v === undefined) return fallback;
  if (!values.includes(v as T)) invalid(field, `one of ${values.map((x) => JSON.stringify(x)).join(', ')}`);
  return v as T;
}

function optionalOctet(s: Record<string, unknown>, field: string, invalid: Fail): number | null {
  return s[field] === undefined || s[field] === null ? null : wholeNumber(s, field, 0, 0, 255, invalid);
}

/** Checks an SMPP connector's settings and fills in the defaults; throws through `invalid` naming the field. */
export function parseSmppSettings(s: Record<string, unknown>, invalid: Fail): SmppConnectorSettings {
  for (const field of Object.keys(s)) if (!SMPP_SETTINGS.includes(field)) invalid(field, 'is not a setting of an SMPP connector');
  const host = text(s, 'host', undefined, 253, invalid);
  if (host === '' || /\s/.test(host)) invalid('host', 'a host name or IP address');
  const reconnectMinSeconds = wholeNumber(s, 'reconnectMinSeconds', 1, 1, 3_600, invalid);
  const reconnectMaxSeconds = wholeNumber(s, 'reconnectMaxSeconds', 60, 1, 3_600, invalid);
  if (reconnectMaxSeconds < reconnectMinSeconds) invalid('reconnectMaxSeconds', 'at least reconnectMinSeconds');
  const registeredDelivery = wholeNumber(s, 'registeredDelivery', 1, 0, 0x1f, invalid);
  return {
    host,
    port: wholeNumber(s, 'port', 2775, 1, 65_535, invalid),
    tls: flag(s, 'tls', false, invalid),
    tlsVerify: flag(s, 'tlsVerify', true, invalid),
    systemId: text(s, 'systemId', undefined, 15, invalid),
    systemType: text(s, 'systemType', '', 12, invalid),
    bindMode: oneOf<BindMode>(s, 'bindMode', ['TRX', 'TX+RX'], 'TRX', invalid),
    binds: wholeNumber(s, 'binds', 1, 1, 64, invalid),
    window: wholeNumber(s, 'window', 10, 1, 1_000, invalid),
    tps: wholeNumber(s, 'tps', 0, 0, 100_000, invalid),
    enquireLinkSeconds: wholeNumber(s, 'enquireLinkSeconds', 30, 0, 3_600, invalid),
    responseTimeoutSeconds: wholeNumber(s, 'responseTimeoutSeconds', 10, 1, 300, invalid),
    reconnectMinSeconds,
    reconnectMaxSeconds,
    throttleWaitMs: wholeNumber(s, 'throttleWaitMs', 1_000, 10, 60_000, invalid),
    sourceTon: optionalOctet(s, 'sourceTon', invalid),
    sourceNpi: optionalOctet(s, 'sourceNpi', invalid),
    destTon: wholeNumber(s, 'destTon', 1, 0, 255, invalid),
    destNpi: wholeNumber(s, 'destNpi', 1, 0, 255, invalid),
    serviceType: text(s, 'serviceType', '', 5, invalid),
    dataCoding: oneOf<TextDataCoding>(s, 'dataCoding', TEXT_DATA_CODINGS, 0, invalid),
    longMessages: oneOf<LongMessageMode>(s, 'longMessages', LONG_MESSAGE_MODES, 'UDH8', invalid),
    registeredDelivery,
    sendValidity: flag(s, 'sendValidity', false, invalid),
    submitIdFormat: oneOf<MessageIdFormat>(s, 'submitIdFormat', MESSAGE_ID_FORMATS, 'ASIS', invalid),
    receiptIdFormat: oneOf<MessageIdFormat>(s, 'receiptIdFormat', MESSAGE_ID_FORMATS, 'ASIS', invalid),
    moPartsTimeoutSeconds: wholeNumber(s, 'moPartsTimeoutSeconds', 120, 1, 86_400, invalid),
  };
}
