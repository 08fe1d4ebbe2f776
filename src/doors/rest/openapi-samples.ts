/**
 * Examples made from an operation's schemas, for the operations without a hand-written one (openapi-examples.ts):
 * each value comes from a small set of shared sample values, by the name of the field it fills (a `messageId`, a
 * `to`, a `creationDate`…), so that every example speaks of the same organisation, channel and messages; a field with
 * no sample gets what its schema allows (its `const`, `default`, first enum value, a length or range it accepts).
 * A sample that its schema refuses (another pattern, enum or type) is not used. Generators (json-schema-sampler,
 * openapi-sampler) fill every string with "string" and know nothing of what a field means: these read as Tern's
 * answers do.
 */
type Json = Record<string, any>;

/** The ids of the examples, shared with the hand-written ones: one organisation, one channel, one message… */
export const SAMPLE_IDS: Record<string, string> = {
  messageId: '01a251dd-0001-7000-8000-000000000001',
  channelId: '01a251dd-0002-7000-8000-000000000002',
  campaignId: '01a251dd-0003-7000-8000-000000000003',
  organisationId: '01a251dd-0005-7000-8000-000000000005',
  consumptionId: '01a251dd-0006-7000-8000-000000000006',
  templateId: '01a251dd-0007-7000-8000-000000000007',
  credentialId: '01a251dd-0008-7000-8000-000000000008',
  userId: '01a251dd-0009-7000-8000-000000000009',
  invitationId: '01a251dd-000a-7000-8000-00000000000a',
  connectorId: '01a251dd-000b-7000-8000-00000000000b',
  routeId: '01a251dd-000c-7000-8000-00000000000c',
  rateId: '01a251dd-000d-7000-8000-00000000000d',
  transferId: '01a251dd-000e-7000-8000-00000000000e',
  senderId: '01a251dd-000f-7000-8000-00000000000f',
  otpId: '01a251dd-0011-7000-8000-000000000011',
  conversationId: '01a251dd-0012-7000-8000-000000000012',
  smppCredentialId: '01a251dd-0013-7000-8000-000000000013',
  eventId: '01a251dd-0014-7000-8000-000000000014',
  auditId: '01a251dd-0015-7000-8000-000000000015',
  entryId: '01a251dd-0016-7000-8000-000000000016',
  parentOrganisationId: '01a251dd-0017-7000-8000-000000000017',
  fallbackSmsChannelId: '01a251dd-0018-7000-8000-000000000018',
  batchId: '01a251dd-0019-7000-8000-000000000019',
  originMessageId: '01a251dd-001a-7000-8000-00000000001a',
  openedByMessageId: '01a251dd-0001-7000-8000-000000000001',
};

const BASE = 'https://tern.example.com';
const AT = '2026-12-07T18:56:09.018Z';

/** Sample values by field name. */
const SAMPLES: Record<string, unknown> = {
  ...SAMPLE_IDS,
  to: '33612345678',
  msisdn: '33612345678',
  numero: '0612345678',
  mobile: '0612345678',
  telephone: '0145678900',
  phoneNumber: '+33612345678',
  from: 'ACME',
  emetteur: 'ACME',
  defaultFromField: 'ACME',
  text: 'Your code is 123456',
  message: 'Your code is 123456',
  title: 'Your delivery',
  description: 'Parcel 4711 arrives today between 2 pm and 4 pm',
  label: 'Track it',
  postbackData: 'track_4711',
  refClient: 'order-42',
  reference: 'invoice-2026-12',
  name: 'Notifications',
  'organisation.name': 'Acme',
  'parentOrganisation.name': 'Acme Group',
  'channel.name': 'Notifications',
  'currentNetwork.name': 'SFR',
  'originalNetwork.name': 'SFR',
  'balance.amount': 9.815,
  'optOut.text': 'STOP au 36111',
  valid: true,
  possible: true,
  reachable: true,
  enabled: true,
  'connector.name': 'Orange France SMPP',
  'route.name': 'French mobiles',
  'template.name': 'Delivery notice',
  'credential.name': 'Production server',
  'smppCredential.name': 'Production SMPP bind',
  'user.name': 'Claire Martin',
  'sender.name': 'ACME',
  flow: 'TRANSACTIONAL',
  state: 'ACTIVE',
  monthlyConsumptionLimit: 100,
  dailyConsumptionLimit: 20,
  type: 'SMS',
  kind: 'SMS',
  value: 'DELIVERED',
  agent: 'acme_deliveries_agent',
  nom: 'Martin',
  prenom: 'Claire',
  societe: 'Acme',
  adresse: '12 rue de la Paix',
  ville: 'Paris',
  codePostal: '75002',
  email: 'claire.martin@acme.example',
  username: 'claire.martin@acme.example',
  password: 'correct-horse-battery-staple',
  pseudo: 'acme',
  pass: 'correct-horse-battery-staple',
  newPseudo: 'acme-shop',
  newPass: 'another-long-passphrase',
  targetPseudo: 'acme-shop',
  pseudoToDelete: 'acme-shop',
  accessToken: 'tern_zQ4pX0bq7VdJm2Lc9sYtR1fKwHn3uE8aGiO5Ny6BvTk',
  keyPrefix: 'tern_zQ4pX0b',
  secret: 'whsec_MfKQ9r8GKYqrTv2lJ0jTnZ4Y0w0ZkA9x',
  previousSecret: 'whsec_7bq2Zx1nHcLw4pYt9vEoRa6sUj3kM8dF',
  currency: 'EUR',
  amount: 0.045,
  creditAmount: 50,
  transferAmount: 50,
  cost: 0.045,
  costPerPart: 0.045,
  pricePerPart: 0.045,
  unitAmount: 0.045,
  country: 'France',
  countries: ['FR'],
  allowedCountries: ['FR', 'BE'],
  isoCountryCode: 'FR',
  defaultCountry: 'FR',
  countryPrefix: '33',
  prefix: '336',
  mccMnc: '20810',
  mcc: '208',
  mnc: '10',
  network: 'SFR',
  timeZone: 'Europe/Paris',
  language: 'en-GB',
  locale: 'en-GB',
  charset: 'UTF-8',
  shortCode: '36111',
  optOutShortCode: '36111',
  optOutText: 'STOP au 36111',
  url: `${BASE}/hooks/tern`,
  callbackUrl: `${BASE}/hooks/tern`,
  callbackUrlStatus: `${BASE}/hooks/status`,
  callbackUrlMo: `${BASE}/hooks/inbound`,
  defaultCallbackUrlStatus: `${BASE}/hooks/status`,
  defaultCallbackUrlMo: `${BASE}/hooks/inbound`,
  notification_url: `${BASE}/hooks/status`,
  notification_url_reponse: `${BASE}/hooks/inbound`,
  fileUrl: 'https://cdn.acme.example/parcel.jpg',
  thumbnailUrl: 'https://cdn.acme.example/parcel-thumb.jpg',
  signInUrl: `${BASE}/console/sign-in`,
  redirectUri: `${BASE}/commons/v1/sso/callback`,
  issuer: 'https://login.acme.example',
  clientId: 'tern-console',
  clientSecret: 'a-long-client-secret',
  filename: 'parcel.jpg',
  contentType: 'image/jpeg',
  systemId: 'acme01',
  remoteAddress: '203.0.113.7',
  allowedIps: ['203.0.113.0/24'],
  allowedDomains: ['acme.example'],
  csv: 'country,mcc,mnc,price,currency\nFR,208,10,0.031,EUR\nFR,208,01,0.033,EUR',
  template: 'Your code is {code}',
  code: '123456',
  date_envoi: '08122026-09:30',
  classe_msg: '2',
  nbr_msg: '5',
  smsID: '01a251dd-0001-7000-8000-000000000001',
  deliveryId: 'msg_01a251dd00017000800000000000001',
  latitude: 48.8686,
  longitude: 2.3308,
  page: 1,
  pageSize: 10,
  startDate: '2026-12-01',
  endDate: '2026-12-31',
  period: 'MONTH',
  requestId: 'req-7f3a91c2',
  lastError: 'connection refused',
  detail: 'Delivered to the handset',
  errorCode: '400.001',
  action: 'UPDATE',
  interface: 'REST',
  tps: 50,
  maxBinds: 2,
  quantity: 4,
  messages: 4,
  accepted: 2,
  rejected: 0,
  recipients: 2,
  clicks: 0,
  links: 0,
  clickedLinks: 0,
  balance: 9.815,
  monthlyConsumption: 0.185,
  dailyConsumption: 0.185,
  httpStatus: 200,
  lastHttpStatus: 200,
  latencyMs: 84,
  attemptCount: 1,
  weight: 100,
  priority: 1,
  codeLength: 6,
  ttlSeconds: 300,
  maxAttempts: 5,
  messagePartCount: 1,
  length: 19,
  contentRetentionDays: 90,
  version: '1.0.0',
  status: 'ok',
  latest: '050-single-sign-on',
  database: 'postgresql',
  id: '01a251dd-0015-7000-8000-000000000015',
  fromFieldList: ['ACME'],
  roles: ['ADMIN'],
  strategy: 'weight',
  secretsSet: ['password'],
  connector: 'Orange France SMPP',
  route: 'French mobiles',
  variables: ['name', 'date'],
  validFrom: '2026-12-01T00:00:00.000Z',
  validTo: '2027-01-01T00:00:00.000Z',
  at: AT,
  outcome: 'delivered',
  source: 'API',
  method: 'POST',
  payload: '{"messageId":"01a251dd-0001-7000-8000-000000000001","status":{"value":"DELIVERED"}}',
  error: 'HTTP 503 from the receiver',
  holidayCalendar: 'FR',
  holidays: ['2026-12-25'],
  channelIds: ['01a251dd-0002-7000-8000-000000000002'],
  channelType: 'SMS',
  e164: '+33612345678',
  international: '+33 6 12 34 56 78',
  national: '06 12 34 56 78',
  msisdns: ['33612345678', '33698765432'],
  recipient: '33612345678',
  named: ['Orange France SMPP'],
  refused: 'every connector places it at a loss',
  number: '0612345678',
  input: '0612345678',
  token: 'inv_Qm9uam91ciBDbGFpcmUh',
  csrfToken: 'csrf_5b1f2d3c4a5b3f9a2c7e41b8',
  groupsClaim: 'groups',
  group: 'sms-senders',
  reason: 'no route for this number',
  replacedBy: '[erased]',
  features: ['RICHCARD_STANDALONE', 'ACTION_OPEN_URL'],
  stop: '1',
  offset: '20',
  start: '0',
  groupe: 'customers',
  groupes: 'customers',
  account: 'acme',
  fichier: '33612345678;Your code is 123456;ACME;order-42',
};

/** Other samples of a field, for the schemas that refuse the first: an SMPP password has at most 8 characters. */
const ALTERNATIVES: Record<string, string[]> = { password: ['Kq7vP2xz'] };

/** The optional fields a request example shows (beside the required ones): those most callers set. */
const REQUEST_FIELDS = new Set(['from', 'refClient', 'callbackUrlStatus', 'name', 'description', 'email', 'url', 'timeZone', 'defaultCountry']);

/** Optional fields of an answer that only some objects have (a revoked key, a failed delivery): left out of answers. */
const EXCEPTIONAL = new Set([
  'detail',
  'error',
  'lastError',
  'refused',
  'revocationDate',
  'cancellationDate',
  'contentErasedAt',
  'deferredUntil',
  'windowOverride',
  'originMessageId',
  'previousSecret',
  'previousSecretValidUntil',
  'replacedBy',
  'truncated',
]);

/** A date-time for the fields named as one (`creationDate`, `acceptedAt`…). */
const isDateName = (name: string) => /(Date|At|Since|Until)$/.test(name) || name === 'since' || name === 'expiration' || name === 'date';

const KNOWN_PATTERNS: Record<string, string> = {
  '^\\d{1,15}$': '33612345678',
  '^\\d{0,15}$': '33612345678',
  '^\\d{5,6}$': '20810',
  '^[A-Z]{2}$': 'FR',
  '^([A-Z]{2}|\\*)$': 'FR',
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export class Sampler {
  private readonly doc: Json;
  /** Values of whole schemas by name (`Message`), for the operations at hand (the RCS ones answer RCS messages). */
  private schemaExamples: Record<string, unknown> = {};
  /** Sample values of the operation at hand, over SAMPLES: an RCS operation's `type` is `RCS`. */
  private context: Record<string, unknown> = SAMPLES;
  /** The operation's path with its parameters filled: the `href` of what it answers. */
  private path = '';
  /** What the operation's path names last (`organisation` for `/admin/v1/organisations`): the subject of a request. */
  private subject = '';
  constructor(doc: Json) {
    this.doc = doc;
  }

  /** Samples for an operation on `path`, of a channel type, answering `schemaExamples` for the schemas they name. */
  forOperation(path: string, context: Record<string, unknown>, schemaExamples: Record<string, unknown>): void {
    this.context = { ...SAMPLES, ...context };
    this.subject = /([A-Za-z-]+?)(?:ies|s)?(?:\/\{[^}]+\})?$/.exec(path)?.[1]?.replace(/-(\w)/g, (_, c: string) => c.toUpperCase()) ?? '';
    this.schemaExamples = schemaExamples;
    this.path = path.replace(/\{([^}]+)\}/g, (_, name: string) => String(this.context[name] ?? SAMPLE_IDS.messageId));
  }

  /** The sample of a field name, for the operation at hand. */
  valueOf(name: string): unknown {
    return this.context[name];
  }

  /** A value of `schema` for a field called `name`; `full` also fills the optional fields (answers show them all). */
  sample(schema: Json | undefined, name = '', full = true, depth = 0): unknown {
    const named = typeof schema?.$ref === 'string' ? this.schemaExamples[schema.$ref.replace('#/components/schemas/', '')] : undefined;
    if (named !== undefined) return named;
    const s = this.resolve(schema);
    if (!s || depth > 12) return undefined;
    if (s.example !== undefined) return s.example;
    if (Array.isArray(s.examples) && s.examples.length > 0) return s.examples[0];
    if (s.const !== undefined) return s.const;
    if (Array.isArray(s.enum)) {
      const named = this.context[name];
      if (s.enum.includes(named)) return named;
      return s.enum.find((v: unknown) => v !== null) ?? s.enum[0];
    }
    if (Array.isArray(s.allOf)) return this.allOf(s, name, full, depth);
    const choices = s.anyOf ?? s.oneOf;
    if (Array.isArray(choices)) {
      const resolved = choices.map((c: Json) => this.resolve(c)).filter((c: Json | undefined): c is Json => c !== undefined && c.type !== 'null');
      // The branch of the sample's type (a transfer's amount is a number or a string), else the first.
      const sampleType = typeof this.context[name];
      const branch = resolved.find((c: Json) => c.type === sampleType || (sampleType === 'number' && c.type === 'integer')) ?? resolved[0] ?? choices[0];
      return this.sample(branch, name, full, depth + 1);
    }
    const type = Array.isArray(s.type) ? s.type.find((t: string) => t !== 'null') : (s.type ?? (s.properties ? 'object' : undefined));
    switch (type) {
      case 'object':
        return this.object(s, name, full, depth);
      case 'array':
        return this.array(s, name, full, depth);
      case 'string':
        return this.string(s, name);
      case 'integer':
      case 'number':
        return this.number(s, name, type === 'integer');
      case 'boolean': {
        const named = this.context[name];
        return typeof named === 'boolean' ? named : (s.default ?? false);
      }
      default:
        return this.context[name] ?? s.default ?? null;
    }
  }

  /** Every part merged; an `if`/`then` part (the RCS bodies, by their `type`) only when the value so far matches it. */
  private allOf(s: Json, name: string, full: boolean, depth: number): unknown {
    const { allOf, ...base } = s;
    let value = base.type !== undefined || base.properties !== undefined ? this.sample(base, name, full, depth) : undefined;
    for (const part of allOf as Json[]) {
      const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);
      if (part.if !== undefined) {
        if (isObject(value) && this.matches(part.if, value)) {
          const then = this.sample(part.then, name, full, depth + 1);
          if (isObject(then)) value = { ...value, ...then };
        }
        continue;
      }
      const v = this.sample(part, name, full, depth + 1);
      value = isObject(value) && isObject(v) ? { ...value, ...v } : (value ?? v);
    }
    return value;
  }

  private matches(condition: Json, value: Json): boolean {
    return Object.entries((condition.properties ?? {}) as Record<string, Json>).every(([key, c]) =>
      c.const !== undefined ? value[key] === c.const : !Array.isArray(c.enum) || c.enum.includes(value[key]),
    );
  }

  private resolve(schema: Json | undefined): Json | undefined {
    let s = schema;
    for (let i = 0; s?.$ref && i < 10; i++) {
      s = String(s.$ref)
        .split('/')
        .slice(1)
        .reduce((o: any, k: string) => o?.[k], this.doc);
    }
    return s;
  }

  private object(s: Json, name: string, full: boolean, depth: number): Json {
    const props = (s.properties ?? {}) as Record<string, Json>;
    const required = new Set<string>(s.required ?? []);
    if (Object.keys(props).length === 0) {
      const named = this.context[name];
      if (named && typeof named === 'object' && !Array.isArray(named)) return named as Json;
      return {};
    }
    const out: Json = {};
    // A field's sample may depend on the object it is in: by the object's own name (`balance.amount`), or by what the
    // object is, from its first required id field (an organisation's `name`, a channel's).
    const kind = [...required].find((k) => k.endsWith('Id'))?.slice(0, -2) ?? (depth === 0 ? this.subject : undefined);
    const fieldOf = (key: string) => [`${name}.${key}`, `${kind}.${key}`].find((f) => f in this.context) ?? key;
    for (const [key, prop] of Object.entries(props)) {
      // A request shows what it needs and the fields every reader knows; an answer shows everything (but deep down,
      // only what is required).
      const shown = required.has(key) || (full ? depth < 4 && !EXCEPTIONAL.has(key) : REQUEST_FIELDS.has(key) || this.isObject(prop));
      if (!shown) continue;
      const value = this.sample(prop, fieldOf(key), full && depth < 4, depth + 1);
      if (value !== undefined && !(value === null && !this.allowsNull(prop) && !required.has(key))) out[key] = value;
    }
    // A request of optional fields only (a change, a setting) shows a few of them; minProperties is met.
    const least = Math.max(s.minProperties ?? 0, Object.keys(out).length === 0 ? Math.min(3, Object.keys(props).length) : 0);
    for (const [key, prop] of Object.entries(props)) {
      if (Object.keys(out).length >= least) break;
      if (!(key in out) && !EXCEPTIONAL.has(key)) out[key] = this.sample(prop, fieldOf(key), full, depth + 1);
    }
    if (typeof out.href === 'string') out.href = this.hrefOf(out);
    return out;
  }

  /** What the operation answers is at its path, or one of its items (its first id field) below it. */
  private hrefOf(value: Json): string {
    const id = Object.entries(value).find(([k, v]) => k.endsWith('Id') && typeof v === 'string')?.[1] as string | undefined;
    if (id === undefined || this.path.endsWith(`/${id}`)) return `${BASE}${this.path}`;
    return `${BASE}${this.path}/${id}`;
  }

  private isObject(schema: Json): boolean {
    const s = this.resolve(schema);
    return s?.type === 'object' && s.properties !== undefined && (s.required?.length ?? 0) > 0;
  }

  private allowsNull(schema: Json): boolean {
    const s = this.resolve(schema);
    return s?.type === 'null' || (Array.isArray(s?.type) && s.type.includes('null'));
  }

  private array(s: Json, name: string, full: boolean, depth: number): unknown[] {
    const named = this.context[name];
    const items = this.resolve(s.items);
    if (Array.isArray(named) && (items?.type === 'string' || items?.enum)) {
      if (!items?.enum || named.every((v) => items.enum.includes(v))) return named;
    }
    const one = this.sample(s.items, name, full, depth + 1);
    if (one === undefined) return [];
    const count = Math.max(1, s.minItems ?? 1);
    return Array.from({ length: count }, () => one);
  }

  private string(s: Json, name: string): string {
    const fits = (v: unknown): v is string =>
      typeof v === 'string' &&
      (s.pattern === undefined || new RegExp(s.pattern, 'u').test(v)) &&
      (s.minLength === undefined || v.length >= s.minLength) &&
      (s.maxLength === undefined || v.length <= s.maxLength) &&
      (s.format !== 'uuid' || UUID.test(v));
    const named = this.context[name];
    const candidates = [
      named,
      typeof named === 'number' ? String(named) : undefined,
      ...(ALTERNATIVES[name] ?? []),
      name.endsWith('Id') || name === 'id' || s.format === 'uuid' || s.pattern?.startsWith('^[0-9a-fA-F]{8}')
        ? (SAMPLE_IDS[name] ?? SAMPLE_IDS.messageId)
        : undefined,
      isDateName(name) ? AT : undefined,
      name === 'href' ? `${BASE}/sms/v1/messages/${SAMPLE_IDS.messageId}` : undefined,
      /url$/i.test(name) ? `${BASE}/hooks/tern` : undefined,
      s.default,
      s.pattern !== undefined ? KNOWN_PATTERNS[s.pattern] : undefined,
      name,
      'x'.repeat(Math.max(1, s.minLength ?? 1)),
    ];
    return candidates.find(fits) ?? '';
  }

  private number(s: Json, name: string, integer: boolean): number {
    const fits = (v: unknown): v is number =>
      typeof v === 'number' &&
      (!integer || Number.isInteger(v)) &&
      (s.minimum === undefined || v >= s.minimum) &&
      (s.maximum === undefined || v <= s.maximum) &&
      (s.exclusiveMinimum === undefined || v > s.exclusiveMinimum) &&
      (s.exclusiveMaximum === undefined || v < s.exclusiveMaximum);
    const candidates = [this.context[name], s.default, s.minimum, s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1 : undefined, 1, 0, s.maximum];
    return candidates.find(fits) ?? 0;
  }
}
