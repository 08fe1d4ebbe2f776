// Fakes of the two live number-lookup providers, each following its published contract field by field:
//
// - Twilio Lookup v2: https://www.twilio.com/docs/lookup/v2-api (the PhoneNumbers resource), with the Line Type
//   Intelligence (https://www.twilio.com/docs/lookup/v2-api/line-type-intelligence) and Line Status
//   (https://www.twilio.com/docs/lookup/v2-api/line-status) packages; errors as Twilio's REST error body
//   (https://www.twilio.com/docs/usage/twilios-response: {code, message, more_info, status}), 20003 on bad credentials.
// - Infobip Number Lookup: https://www.infobip.com/docs/api/channels/sms/number-lookup (POST /number/1/query, the
//   NumberContextResponse of Infobip's API clients), errors as {requestError:{serviceException:{messageId, text}}}, and
//   Infobip's status and error codes (https://www.infobip.com/docs/essentials/response-status-and-error-codes).
//
// Both refuse what the real services refuse (bad credentials, another method or path, an unknown field, a malformed
// body), answer numbers they do not know as the real ones answer unassigned numbers, and can be made to fail (an HTTP
// 500, or no answer at all) to test timeouts.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** A subscriber the fake network knows. */
export interface Subscriber {
  msisdn: string;
  /** The network it is on now. */
  mccMnc: string;
  network: string;
  /** The network its range was allocated to (different when ported). */
  originalMccMnc: string;
  originalNetwork: string;
  /** Attached now; false: absent (switched off, out of coverage). */
  reachable: boolean;
  roaming?: boolean;
  /** Twilio's line type (mobile, landline, nonFixedVoip…); mobile by default. */
  lineType?: string;
}

export type FakeFault = 'none' | 'error500' | 'hang';

export interface LookupFake {
  url: string;
  subscribers: Map<string, Subscriber>;
  /** Requests received (method, path, query, headers, body). */
  requests: Array<{ method: string; path: string; query: URLSearchParams; headers: IncomingMessage['headers']; body: string }>;
  fault: FakeFault;
  close(): Promise<void>;
}

function listen(handler: (req: IncomingMessage, res: ServerResponse, body: string) => void, fake: { fault: FakeFault }) {
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (fake.fault === 'hang') return;
      if (fake.fault === 'error500') return json(res, 500, { message: 'internal error' });
      handler(req, res, Buffer.concat(chunks).toString('utf8'));
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  return new Promise<{ url: string; close(): Promise<void> }>((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as AddressInfo).port;
      resolve({
        url: `http://127.0.0.1:${port}`,
        close: () =>
          new Promise<void>((done) => {
            for (const s of sockets) s.destroy();
            server.close(() => done());
          }),
      });
    });
  });
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

// ---------------------------------------------------------------------------------------------------------------- Twilio

/** The data packages Lookup v2 knows (`Fields`); any other name is refused with 60200. */
const TWILIO_PACKAGES = new Set([
  'validation',
  'caller_name',
  'sim_swap',
  'call_forwarding',
  'line_status',
  'line_type_intelligence',
  'identity_match',
  'reassigned_number',
  'sms_pumping_risk',
  'phone_number_quality_score',
  'pre_fill',
]);

function twilioError(res: ServerResponse, status: number, code: number, message: string): void {
  json(res, status, { code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status });
}

export async function startTwilioLookup(credentials: { accountSid: string; authToken: string }, subscribers: Subscriber[] = []): Promise<LookupFake> {
  const fake: LookupFake = { url: '', subscribers: new Map(subscribers.map((s) => [s.msisdn, s])), requests: [], fault: 'none', close: async () => {} };
  const expected = `Basic ${Buffer.from(`${credentials.accountSid}:${credentials.authToken}`).toString('base64')}`;
  const server = await listen((req, res, body) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    fake.requests.push({ method: req.method ?? '', path: url.pathname, query: url.searchParams, headers: req.headers, body });
    if (req.headers.authorization !== expected) return twilioError(res, 401, 20003, 'Authenticate');
    const match = /^\/v2\/PhoneNumbers\/([^/]+)$/.exec(url.pathname);
    if (!match) return twilioError(res, 404, 20404, `The requested resource ${url.pathname} was not found`);
    if (req.method !== 'GET') return twilioError(res, 405, 20004, 'Method not allowed');
    for (const name of url.searchParams.keys()) {
      if (!['Fields', 'CountryCode', 'FirstName', 'LastName'].includes(name)) return twilioError(res, 400, 60200, `Invalid parameter: ${name}`);
    }
    const fields = (url.searchParams.get('Fields') ?? '').split(',').filter((f) => f !== '');
    for (const f of fields) if (!TWILIO_PACKAGES.has(f)) return twilioError(res, 400, 60200, `Invalid parameter \`Fields\`: ${f}`);
    const number = decodeURIComponent(match[1]!);
    const e164 = /^\+[1-9]\d{5,14}$/.test(number) ? number : null;
    const subscriber = e164 ? fake.subscribers.get(e164.slice(1)) : undefined;
    const valid = subscriber !== undefined;
    const digits = e164?.slice(1) ?? null;
    json(res, 200, {
      calling_country_code: digits ? (digits.startsWith('1') ? '1' : digits.slice(0, 2)) : null,
      country_code: null,
      phone_number: e164 ?? number,
      national_format: null,
      valid,
      validation_errors: valid ? [] : [e164 ? 'INVALID_BUT_POSSIBLE' : 'NOT_A_NUMBER'],
      caller_name: null,
      sim_swap: null,
      call_forwarding: null,
      line_status: fields.includes('line_status') ? (valid ? { status: subscriber.reachable ? 'reachable' : 'unreachable', error_code: null } : null) : null,
      line_type_intelligence: fields.includes('line_type_intelligence')
        ? valid
          ? {
              carrier_name: subscriber.network,
              error_code: null,
              mobile_country_code: subscriber.mccMnc.slice(0, 3),
              mobile_network_code: subscriber.mccMnc.slice(3),
              type: subscriber.lineType ?? 'mobile',
            }
          : null
        : null,
      identity_match: null,
      reassigned_number: null,
      sms_pumping_risk: null,
      phone_number_quality_score: null,
      pre_fill: null,
      url: `https://lookups.twilio.com/v2/PhoneNumbers/${encodeURIComponent(e164 ?? number)}`,
    });
  }, fake);
  fake.url = server.url;
  fake.close = server.close;
  return fake;
}

// --------------------------------------------------------------------------------------------------------------- Infobip

function infobipError(res: ServerResponse, status: number, messageId: string, text: string): void {
  json(res, status, { requestError: { serviceException: { messageId, text } } });
}

const DELIVERED = { groupId: 3, groupName: 'DELIVERED', id: 5, name: 'DELIVERED_TO_HANDSET', description: 'Message delivered to handset' };
const UNDELIVERABLE = { groupId: 2, groupName: 'UNDELIVERABLE', id: 9, name: 'UNDELIVERABLE_NOT_DELIVERED', description: 'Message sent not delivered' };
const NO_ERROR = { groupId: 0, groupName: 'OK', id: 0, name: 'NO_ERROR', description: 'No Error', permanent: false };
const ABSENT = { groupId: 1, groupName: 'HANDSET_ERRORS', id: 27, name: 'EC_ABSENT_SUBSCRIBER', description: 'Absent Subscriber', permanent: false };
const UNKNOWN = { groupId: 1, groupName: 'HANDSET_ERRORS', id: 1, name: 'EC_UNKNOWN_SUBSCRIBER', description: 'Unknown Subscriber', permanent: true };

function network(name: string, msisdn: string) {
  return { networkName: name, networkPrefix: msisdn.slice(2, 4), countryName: 'France', countryPrefix: msisdn.slice(0, 2) };
}

export async function startInfobipLookup(apiKey: string, subscribers: Subscriber[] = []): Promise<LookupFake> {
  const fake: LookupFake = { url: '', subscribers: new Map(subscribers.map((s) => [s.msisdn, s])), requests: [], fault: 'none', close: async () => {} };
  const server = await listen((req, res, body) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    fake.requests.push({ method: req.method ?? '', path: url.pathname, query: url.searchParams, headers: req.headers, body });
    if (req.headers.authorization !== `App ${apiKey}`) return infobipError(res, 401, 'UNAUTHORIZED', 'Invalid login details');
    if (url.pathname !== '/number/1/query') return infobipError(res, 404, 'NOT_FOUND', 'Requested URL not found: ' + url.pathname);
    if (req.method !== 'POST') return infobipError(res, 405, 'METHOD_NOT_ALLOWED', 'Request method not supported');
    if (!(req.headers['content-type'] ?? '').startsWith('application/json')) return infobipError(res, 415, 'UNSUPPORTED_MEDIA_TYPE', 'Unsupported media type');
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      return infobipError(res, 400, 'BAD_REQUEST', 'Bad request');
    }
    const to = (parsed as { to?: unknown })?.to;
    const extra = typeof parsed === 'object' && parsed !== null ? Object.keys(parsed).filter((k) => k !== 'to') : [];
    if (!Array.isArray(to) || to.length === 0 || !to.every((n) => typeof n === 'string') || extra.length > 0) {
      return infobipError(res, 400, 'BAD_REQUEST', 'Bad request');
    }
    json(res, 200, {
      results: (to as string[]).map((raw) => {
        const msisdn = raw.replace(/^\+/, '');
        const s = fake.subscribers.get(msisdn);
        if (!s) return { to: msisdn, status: UNDELIVERABLE, error: UNKNOWN };
        const ported = s.mccMnc !== s.originalMccMnc;
        return {
          to: msisdn,
          mccMnc: s.mccMnc,
          imsi: `${s.mccMnc}0000000000`.slice(0, 15),
          originalNetwork: network(s.originalNetwork, msisdn),
          ...(ported && { portedNetwork: network(s.network, msisdn) }),
          ported,
          roaming: s.roaming ?? false,
          ...(s.roaming && { roamingNetwork: { networkName: 'Swisscom', networkPrefix: '79', countryName: 'Switzerland', countryPrefix: '41' } }),
          status: s.reachable ? DELIVERED : UNDELIVERABLE,
          error: s.reachable ? NO_ERROR : ABSENT,
        };
      }),
    });
  }, fake);
  fake.url = server.url;
  fake.close = server.close;
  return fake;
}
