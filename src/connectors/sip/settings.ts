import { isIP } from 'node:net';
import { wholeNumber } from '../kind.ts';
import type { G711Codec } from './g711.ts';

export interface SipSettings {
  /** The trunk or registrar: a host name or an IPv4 address, and its port. */
  host: string;
  port: number;
  transport: 'UDP' | 'TCP';
  /** The domain of the From and To addresses; the host by default. */
  domain: string;
  /** Register with the host (a registrar) as `username`, renewed before `registerExpiresSeconds` run out. */
  register: boolean;
  registerExpiresSeconds: number;
  /** Digest user name (the password is the connector's secret); null: the trunk authenticates by address. */
  username: string | null;
  /** The number shown to the person called; null: the message's sender when it is a number, else the username. */
  callerId: string | null;
  /** G.711 codecs offered, in order of preference. */
  codecs: G711Codec[];
  maxCalls: number;
  /** Calls started a second across the cluster; 0: no limit. */
  callsPerSecond: number;
  ringTimeoutSeconds: number;
  /** Play the message a second time after a pause. */
  repeat: boolean;
  /** Put before the international number in the request URI: "" (33612345678), "+" or "00". */
  dialPrefix: string;
  /** The IPv4 address Tern's SIP and RTP use; null: the one the system routes to the host from. */
  localAddress: string | null;
  /** The local SIP port; 0: any free one. */
  localPort: number;
  /** How often the trunk is asked whether it is up (OPTIONS) when not registering. */
  keepaliveSeconds: number;
  /** How long a call's INVITE may go unanswered by the trunk before the call goes to the route's next connector. */
  trunkTimeoutMs: number;
}

const FIELDS = [
  'host',
  'port',
  'transport',
  'domain',
  'register',
  'registerExpiresSeconds',
  'username',
  'callerId',
  'codecs',
  'maxCalls',
  'callsPerSecond',
  'ringTimeoutSeconds',
  'repeat',
  'dialPrefix',
  'localAddress',
  'localPort',
  'keepaliveSeconds',
  'trunkTimeoutMs',
];

const HOST = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;
const SIP_USER = /^[A-Za-z0-9_.!~*'()&=+$,;?/-]{1,64}$/;

function optionalBool(settings: Record<string, unknown>, field: string, fallback: boolean, invalid: (field: string, reason: string) => never): boolean {
  const v = settings[field];
  if (v === undefined) return fallback;
  if (typeof v !== 'boolean') invalid(field, 'true or false');
  return v;
}

function optionalString(
  settings: Record<string, unknown>,
  field: string,
  check: RegExp,
  what: string,
  invalid: (field: string, reason: string) => never,
): string | null {
  const v = settings[field];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string' || !check.test(v)) invalid(field, what);
  return v;
}

/** Checks a SIP connector's settings and fills in the defaults; `invalid` throws naming the field. */
export function parseSipSettings(settings: Record<string, unknown>, hasPassword: boolean, invalid: (field: string, reason: string) => never): SipSettings {
  for (const field of Object.keys(settings)) if (!FIELDS.includes(field)) invalid(field, 'is not a setting of a SIP connector');
  const host = settings.host;
  if (typeof host !== 'string' || !(HOST.test(host) || isIP(host) === 4))
    invalid('host', 'is required: the trunk or registrar, a host name or an IPv4 address');
  const transport = settings.transport ?? 'UDP';
  if (transport !== 'UDP' && transport !== 'TCP') invalid('transport', 'UDP or TCP');
  const codecs = settings.codecs ?? ['PCMA', 'PCMU'];
  if (!Array.isArray(codecs) || codecs.length === 0 || codecs.some((c) => c !== 'PCMA' && c !== 'PCMU') || new Set(codecs).size !== codecs.length) {
    invalid('codecs', 'a list of PCMA and PCMU (G.711), in order of preference');
  }
  const username = optionalString(settings, 'username', SIP_USER, "a SIP user name (letters, digits and - _ . ! ~ * ' ( ) & = + $ , ; ? /)", invalid);
  if (username !== null && !hasPassword) invalid('password', 'is required with a username');
  if (username === null && hasPassword) invalid('username', 'is required with a password');
  const register = optionalBool(settings, 'register', false, invalid);
  if (register && username === null) invalid('username', 'is required to register');
  const localAddress = settings.localAddress ?? null;
  if (localAddress !== null && (typeof localAddress !== 'string' || isIP(localAddress) !== 4)) invalid('localAddress', 'an IPv4 address of this machine');
  if (localAddress !== null && localAddress === host && !host.startsWith('127.')) invalid('localAddress', 'must differ from the host');
  const dialPrefix = settings.dialPrefix ?? '';
  if (dialPrefix !== '' && dialPrefix !== '+' && dialPrefix !== '00') invalid('dialPrefix', '"", "+" or "00"');
  const domain = settings.domain ?? host;
  if (typeof domain !== 'string' || !(HOST.test(domain) || isIP(domain) === 4)) invalid('domain', 'a host name or an IPv4 address');
  return {
    host,
    port: wholeNumber(settings, 'port', 5060, 1, 65535, invalid),
    transport,
    domain,
    register,
    registerExpiresSeconds: wholeNumber(settings, 'registerExpiresSeconds', 300, 60, 86_400, invalid),
    username,
    callerId: optionalString(settings, 'callerId', /^\+?[0-9]{1,20}$/, 'a telephone number (digits, optionally after +)', invalid),
    codecs: codecs as G711Codec[],
    maxCalls: wholeNumber(settings, 'maxCalls', 10, 1, 10_000, invalid),
    callsPerSecond: wholeNumber(settings, 'callsPerSecond', 5, 0, 10_000, invalid),
    ringTimeoutSeconds: wholeNumber(settings, 'ringTimeoutSeconds', 30, 1, 300, invalid),
    repeat: optionalBool(settings, 'repeat', false, invalid),
    dialPrefix,
    localAddress,
    localPort: wholeNumber(settings, 'localPort', 0, 0, 65535, invalid),
    keepaliveSeconds: wholeNumber(settings, 'keepaliveSeconds', 30, 1, 3_600, invalid),
    trunkTimeoutMs: wholeNumber(settings, 'trunkTimeoutMs', 2_000, 100, 32_000, invalid),
  };
}
