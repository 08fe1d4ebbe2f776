// Every setting of the server, stated once. The configuration's type (TernConfig), the loader and the tables of
// docs/configuration.md (`npm run docs:settings`) all come from this tree; rules between settings are in rules.ts.
import { DEFAULT_TRAFFIC_LIMITS, parseTrafficLimits, ROUTE_GROUPS } from '../domain/traffic.ts';
import { parseCountryList, parseVelocityLimits } from '../domain/fraud-guards.ts';
import { boolean, integer, longText, oneOf, port, text, textWhere } from './kinds.ts';
import { optional, setting, type Section } from './setting.ts';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** `pretty`: human-readable lines; `json`: one JSON object a line; null: pretty on a terminal, JSON otherwise. */
export const LOG_FORMATS = ['pretty', 'json'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** The sections of docs/configuration.md's settings, in their order, each with a title and what its rows share. */
export const SECTIONS: ReadonlyArray<{ id: Section; title: string; intro?: string }> = [
  { id: 'listeners', title: 'Listeners' },
  { id: 'database', title: 'Database and keys' },
  { id: 'logs', title: 'Logs' },
  { id: 'messages', title: 'Messages, webhooks and voice' },
  {
    id: 'retention',
    title: 'Retention',
    intro: 'Settled data is deleted this many days after it was created; the ledger and consumption figures are kept for good.',
  },
  { id: 'traffic', title: 'Traffic limits, lockouts and fraud guards' },
  { id: 'cluster', title: 'Cluster and background work' },
];

const seconds = { scale: 1000 };
const days = integer(1, 36_500);
const pemFile = text('path of a PEM file');

/** The base of short links: an http(s) URL without query or fragment, ending with `/` (added when missing). */
function shortLinkBase(s: string): string {
  const base = absoluteHttpUrl(s);
  const u = new URL(base);
  if (u.search !== '' || u.hash !== '' || s.includes('?') || s.includes('#')) throw new Error('must have no query or fragment: the code follows it');
  return `${base}/`;
}

function absoluteHttpUrl(s: string): string {
  let u: URL;
  try {
    u = new URL(s);
  } catch {
    throw new Error(`"${s}" is not an absolute URL`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('must be an http or https URL');
  return s.replace(/\/+$/, '');
}

function databaseUrl(s: string): string {
  if (!/^sqlite:.+/.test(s) && !/^postgres(ql)?:\/\/.+/.test(s)) throw new Error('must be sqlite:<path> or postgres://…');
  return s;
}

function retrySchedule(s: string): string {
  if (!/^\s*\d+(ms|s|m|h|d)\s*(,\s*\d+(ms|s|m|h|d)\s*)*$/.test(s)) throw new Error('must be a comma-separated list such as "30s,2m,10m,1h"');
  return s;
}

const trafficLimitsText = ROUTE_GROUPS.map((g) => {
  const { perKey, perOrganisation } = DEFAULT_TRAFFIC_LIMITS[g];
  return perKey === perOrganisation ? `${g}=${perKey}` : `${g}=${perKey}/${perOrganisation}`;
}).join(',');

export const SETTINGS = {
  // Listeners
  httpHost: setting({
    env: 'TERN_HTTP_HOST',
    kind: text('host name or address'),
    default: '0.0.0.0',
    section: 'listeners',
    doc: 'address of the HTTP listener: REST API, legacy HTTP, console, `/docs`, `/healthz`, `/readyz`, `/metrics`',
  }),
  httpPort: setting({ env: 'TERN_HTTP_PORT', kind: port(), default: 8080, section: 'listeners', doc: 'port of the HTTP listener' }),
  /**
   * Bounds on every HTTP (and HTTPS) connection: how long one may sit idle between requests, take to send a
   * request's head, and to send a whole request (head and body); and how many may be open at once.
   */
  httpLimits: {
    keepAliveMs: setting({
      env: 'TERN_HTTP_KEEP_ALIVE_SECONDS',
      kind: integer(1, 3_600, seconds),
      default: 72,
      section: 'listeners',
      doc: 'how long an idle kept-alive HTTP connection stays open',
    }),
    headersTimeoutMs: setting({
      env: 'TERN_HTTP_HEADERS_TIMEOUT_SECONDS',
      kind: integer(1, 3_600, seconds),
      default: 10,
      section: 'listeners',
      doc: "the longest a client may take to send a request's head",
    }),
    requestTimeoutMs: setting({
      env: 'TERN_HTTP_REQUEST_TIMEOUT_SECONDS',
      kind: integer(1, 86_400, seconds),
      default: 60,
      section: 'listeners',
      doc: 'the longest a client may take to send a whole request, body included: a body dripping a byte at a time is cut',
    }),
    idleTimeoutMs: setting({
      env: 'TERN_HTTP_IDLE_TIMEOUT_SECONDS',
      kind: integer(1, 86_400, seconds),
      default: 60,
      section: 'listeners',
      doc: 'a connection on which nothing is read or written for this long is closed, e.g. a client that stopped reading its answer',
    }),
    maxConnections: setting({
      env: 'TERN_HTTP_MAX_CONNECTIONS',
      kind: integer(1, 1_000_000),
      default: 10_000,
      section: 'listeners',
      doc: 'HTTP connections a node holds at once; past it new ones are refused, so a flood cannot run the process out of file descriptors',
    }),
  },
  /** The same application over TLS (PEM files, reloaded when they change), on the HTTP host. */
  httpsPort: optional({
    env: 'TERN_HTTPS_PORT',
    kind: port(),
    documentedDefault: 'unset',
    section: 'listeners',
    doc: 'the same HTTP application over TLS on `TERN_HTTP_HOST`; see [HTTPS](operations.md#https)',
  }),
  httpsCert: optional({
    env: 'TERN_HTTPS_CERT',
    kind: pemFile,
    documentedDefault: 'unset',
    section: 'listeners',
    doc: 'the HTTPS certificate, with its chain',
  }),
  httpsKey: optional({ env: 'TERN_HTTPS_KEY', kind: pemFile, documentedDefault: 'unset', section: 'listeners', doc: "the HTTPS certificate's key" }),
  smppHost: setting({
    env: 'TERN_SMPP_HOST',
    kind: text('host name or address'),
    default: '0.0.0.0',
    section: 'listeners',
    doc: 'address of the SMPP listener',
  }),
  smppPort: setting({ env: 'TERN_SMPP_PORT', kind: port(), default: 8776, section: 'listeners', doc: 'port of the SMPP listener' }),
  smppTlsPort: optional({ env: 'TERN_SMPP_TLS_PORT', kind: port(), documentedDefault: 'unset', section: 'listeners', doc: 'optional SMPP over TLS' }),
  smppTlsCert: optional({ env: 'TERN_SMPP_TLS_CERT', kind: pemFile, documentedDefault: 'unset', section: 'listeners', doc: 'the SMPP over TLS certificate' }),
  smppTlsKey: optional({
    env: 'TERN_SMPP_TLS_KEY',
    kind: pemFile,
    documentedDefault: 'unset',
    section: 'listeners',
    doc: "the SMPP over TLS certificate's key",
  }),
  /** deliver_sm (receipts, MO) sent on one SMPP session and not yet answered, at most. */
  smppWindow: setting({
    env: 'TERN_SMPP_WINDOW',
    kind: integer(1, 1_000),
    default: 10,
    section: 'listeners',
    doc: '`deliver_sm` (receipts, MO) sent on one SMPP session and not answered yet, at most, for credentials without a `window` of their own; the rest wait their turn in the outbox. Receipts go out at about this many per round trip to the client: under load, a client that keeps 100 submits in flight and answers at once wants as many here (`npm run bench smpp`, 50,000 submits: receipts ÷ submits 0.83 at 10, 1.00 at 100)',
  }),
  /** How long the parts of a concatenated submit_sm may take to arrive before the message is given up. */
  smppConcatTimeoutMs: setting({
    env: 'TERN_SMPP_CONCAT_TIMEOUT_SECONDS',
    kind: integer(1, 3_600, seconds),
    default: 60,
    section: 'listeners',
    doc: "how long the parts of a concatenated `submit_sm` (UDH or SAR) may take to arrive, from the first; then the parts received are given up (nothing is sent or charged) and free their room in the credential's budget of 1,000 parts waiting",
  }),
  publicUrl: optional({
    env: 'TERN_PUBLIC_URL',
    kind: textWhere('an absolute `http` or `https` URL', absoluteHttpUrl),
    documentedDefault: "the request's host",
    section: 'listeners',
    doc: 'base of `href` fields and of the callback URLs the SMSMODE_HTTP connector gives its upstream; a trailing `/` is dropped',
  }),

  // Database and keys
  databaseUrl: setting({
    env: 'TERN_DATABASE_URL',
    kind: textWhere('`sqlite:<path>` or `postgres://…`', databaseUrl),
    default: 'sqlite:./data/tern.db',
    secret: true,
    section: 'database',
    doc: "`sqlite:<path>`, or `postgres://user@host:5432/db[?schema=name&pool=10]` (`postgresql://` too); server settings for Tern's sessions go in `options` (e.g. `&options=-c%20statement_timeout%3D30000`), beside those Tern sets (`plan_cache_mode = force_custom_plan`: the pipeline's statements are kept prepared and planned at every run); connections run in the driver's pipeline mode, a transaction's writes sent without waiting for each answer",
  }),
  /**
   * PostgreSQL: the longest a statement may run before the server cancels it (and the client, a little later, gives
   * up on a server that does not answer at all); 0: no limit. Requests that meet it are answered 503.
   */
  dbStatementTimeoutMs: setting({
    env: 'TERN_DB_STATEMENT_TIMEOUT_MS',
    kind: integer(0, 3_600_000, {
      values: '`0`, or 100–3,600,000',
      check: (ms) => (ms > 0 && ms < 100 ? `must be 0 (no limit) or at least 100 ms, got "${ms}"` : null),
    }),
    default: 10_000,
    section: 'database',
    doc: "PostgreSQL: the longest a statement may run; the server cancels it and the request gets a 503. The client gives up 2 s later on a server that does not answer at all, and drops that connection. `0`: no limit. Migrations run without it; a URL's `options=-c statement_timeout=…` overrides the server's side (see [When the database fails](operations.md#when-the-database-fails))",
  }),
  /** PostgreSQL: the longest to wait for a connection, new or from the pool. */
  dbConnectTimeoutMs: setting({
    env: 'TERN_DB_CONNECT_TIMEOUT_MS',
    kind: integer(100, 600_000),
    default: 5_000,
    section: 'database',
    doc: 'PostgreSQL: the longest to wait for a connection, new or free in the pool',
  }),
  /** PostgreSQL: how long a starting node waits for its database to answer before it gives up. */
  dbStartWaitMs: setting({
    env: 'TERN_DB_START_WAIT_SECONDS',
    kind: integer(0, 3_600, seconds),
    default: 60,
    section: 'database',
    doc: 'PostgreSQL: how long a starting node waits for its database to answer (a server restarting, a failover under way), trying again every few seconds and saying so in its log, before it gives up with one line saying why; 0: not at all',
  }),
  /** SQLite durability: NORMAL survives a crash of Tern, FULL also a crash of the machine (an fsync per commit). */
  sqliteSynchronous: setting({
    env: 'TERN_SQLITE_SYNCHRONOUS',
    kind: oneOf(['NORMAL', 'FULL'], { fold: 'upper', refusal: 'must be NORMAL (survives a crash of Tern) or FULL (also a power loss)' }),
    default: 'NORMAL',
    section: 'database',
    doc: 'SQLite durability. `NORMAL` (WAL): every accepted message survives a crash or kill of Tern; the last commits before a power loss or kernel crash may be lost. `FULL`: an fsync per commit, so accepted messages survive a power loss too; commits are grouped, so it costs about 15 % of send throughput (`npm run bench` shows both rows). PostgreSQL follows its own `synchronous_commit`',
  }),
  /** SQLite's page cache, MiB (the operating system's file cache keeps the rest of the database at hand). */
  sqliteCacheMb: setting({
    env: 'TERN_SQLITE_CACHE_MB',
    kind: integer(1, 65_536),
    default: 16,
    section: 'database',
    doc: "SQLite's page cache in MiB (see [Memory](operations.md#memory))",
  }),
  adminKey: optional({
    env: 'TERN_ADMIN_KEY',
    kind: longText(16),
    documentedDefault: 'generated',
    secret: true,
    section: 'database',
    doc: 'operator key for `/admin/v1`; generated, stored hashed and shown once when unset (see [Keys](operations.md#keys))',
  }),
  /** Encrypts secrets kept in the database (operator passwords and API keys, webhook signing secrets). */
  secretKey: optional({
    env: 'TERN_SECRET_KEY',
    kind: longText(32, ' (e.g. `openssl rand -base64 32`)'),
    documentedDefault: 'a key file with SQLite',
    secret: true,
    section: 'database',
    doc: 'key (e.g. `openssl rand -base64 32`) that seals with AES-256-GCM the secrets Tern keeps: webhook signing secrets, operator connection passwords and API keys. Without it, a SQLite node makes `secret.key` beside its database (readable by its owner only) on the first start: back it up with the database. Secrets an older version stored in clear are sealed at start',
  }),

  // Logs
  logLevel: setting({ env: 'TERN_LOG_LEVEL', kind: oneOf(LOG_LEVELS), default: 'info', section: 'logs', doc: 'the least severe kind of line written' }),
  logFormat: optional({
    env: 'TERN_LOG_FORMAT',
    kind: oneOf(LOG_FORMATS, { fold: 'lower', refusal: 'must be pretty (human-readable lines) or json' }),
    documentedDefault: '`pretty` on a terminal, else `json`',
    section: 'logs',
    doc: '`pretty` (human-readable lines) or `json` (one JSON object a line); see [Logs](operations.md#logs)',
  }),
  logMaskNumbers: optional({
    env: 'TERN_LOG_MASK_NUMBERS',
    kind: boolean(),
    documentedDefault: '`true` in `json` format, `false` in `pretty`',
    section: 'logs',
    doc: 'phone numbers in log lines show their country code and last 2 digits only (`+33*******78`); see [Privacy](privacy.md#logs)',
  }),

  // Messages, webhooks and voice
  /** Validity of a message at the operator before it expires, in seconds. */
  messageValiditySeconds: setting({
    env: 'TERN_MESSAGE_VALIDITY_SECONDS',
    kind: integer(1, 30 * 86_400, { values: '1 s to 30 days (2,592,000)' }),
    default: 172_800,
    documentedDefault: '`172800` (48 h)',
    section: 'messages',
    doc: 'how long a message may wait for its delivery receipt',
  }),
  /** How long a live lookup's result is kept per number for routing (the network a number is on now), in days. */
  lookupCacheDays: setting({
    env: 'TERN_LOOKUP_CACHE_DAYS',
    kind: integer(1, 3_650, { values: '1–3,650 days' }),
    default: 30,
    section: 'messages',
    doc: "how long a live lookup's result is kept per number: routes that match on `mccMnc` use the network the number is on now while it is kept, the number plan's afterwards; a new lookup refreshes it",
  }),
  shortLinkBase: optional({
    env: 'TERN_SHORT_LINK_BASE',
    kind: textWhere('an absolute `http` or `https` URL without query', shortLinkBase),
    documentedDefault: 'none: channels cannot turn `shortLinks` on',
    section: 'messages',
    doc: 'where the short links of channels with `shortLinks` point: a link is this base, a `/` and a 10-character code; Tern answers them at `/l/{code}` on its HTTP port, so the base is that path as seen from outside (`https://t.example/l`), or a short domain whose proxy sends `/{code}` there (see [Short links](marketing.md#short-links-and-clicks))',
  }),
  shortLinkDays: setting({
    env: 'TERN_SHORT_LINK_DAYS',
    kind: integer(1, 3_650, { values: '1–3,650 days' }),
    default: 30,
    section: 'messages',
    doc: 'how long a short link redirects after its message was accepted; later it answers 404',
  }),
  webhookAllowPrivate: setting({
    env: 'TERN_WEBHOOK_ALLOW_PRIVATE',
    kind: boolean(),
    default: false,
    documentedDefault: '`false` (`true` with `--demo`)',
    section: 'messages',
    doc: 'allow webhooks to private, loopback and link-local addresses',
  }),
  webhookRetrySchedule: setting({
    env: 'TERN_WEBHOOK_RETRY_SCHEDULE',
    kind: textWhere('delays, comma-separated, each a number and a unit (`ms`, `s`, `m`, `h`, `d`)', retrySchedule),
    default: '30s,2m,10m,1h,5h,24h',
    section: 'messages',
    doc: 'webhook retry delays (jittered ±10 %)',
  }),
  /** Webhook requests in flight to one origin (scheme, host and port) of one organisation at once, per node. */
  webhookConnections: setting({
    env: 'TERN_WEBHOOK_CONNECTIONS',
    kind: integer(1, 1_000),
    default: 8,
    section: 'messages',
    doc: "webhook requests in flight to one origin at once, per node; the rest wait their turn. A busy node answers its webhooks' responses late, so an origin gets about this many deliveries per round trip: a receiver taking thousands a second wants more (`npm run bench e2e`, 50,000 messages to one receiver: 2,223 msg/s, p50 10.4 s at 8; 2,405 msg/s, p50 4.6 s at 64)",
  }),
  /** Sockets a node keeps open to webhook receivers, idle ones included: in all, and for one organisation. */
  webhookSockets: {
    total: setting({
      env: 'TERN_WEBHOOK_SOCKETS',
      kind: integer(1, 100_000),
      default: 256,
      section: 'messages',
      doc: 'webhook sockets a node keeps open in all, idle ones included, and attempts in flight; past it attempts wait in memory, organisations taking turns, and the idle connection unused the longest is closed to make room',
    }),
    perOrganisation: setting({
      env: 'TERN_WEBHOOK_SOCKETS_PER_ORGANISATION',
      kind: integer(1, 100_000),
      default: 64,
      section: 'messages',
      doc: 'the same for one organisation: one tenant with webhooks to thousands of destinations cannot take every socket; the sender also holds at most 1,000 deliveries of one organisation, the rest waiting in the outbox',
    }),
  },
  simulator: {
    /** Delay before the simulated operator answers a submit, in ms. */
    submitLatencyMs: setting({
      env: 'TERN_SIMULATOR_SUBMIT_LATENCY_MS',
      kind: integer(0, 600_000),
      default: 0,
      section: 'messages',
      doc: "the [simulator](connectors.md#the-simulator)'s answer to a submit comes this long after it",
    }),
    /** Delay between the submit and the delivery receipt, in ms. */
    receiptLatencyMs: setting({
      env: 'TERN_SIMULATOR_RECEIPT_LATENCY_MS',
      kind: integer(0, 3_600_000),
      default: 50,
      section: 'messages',
      doc: "the simulator's receipt comes this long after its answer",
    }),
  },
  /** Text-to-speech: eSpeak NG compiled to WebAssembly (no system package), or the espeak-ng program; worker threads (null: the default). */
  tts: {
    engine: setting({
      env: 'TERN_TTS_ENGINE',
      kind: oneOf(['wasm', 'espeak-ng'], { fold: 'lower', refusal: 'must be wasm (eSpeak NG built in) or espeak-ng (the program of the Debian package)' }),
      default: 'wasm',
      section: 'messages',
      doc: 'text-to-speech: `wasm` (eSpeak NG built in, no system package) or `espeak-ng` (the program of the Debian package, on `PATH`)',
    }),
    workers: optional({
      env: 'TERN_TTS_WORKERS',
      kind: integer(1, 64),
      documentedDefault: 'the cores less one, 1 to 4',
      section: 'messages',
      doc: 'worker threads synthesising speech with the built-in engine (each loads the engine once, about 80 MB, and stops after a minute without work)',
    }),
  },
  /** Delay before a voice call whose line was busy or that nobody answered is placed again, in ms. */
  voiceRetryMs: setting({
    env: 'TERN_VOICE_RETRY_MS',
    // Its former name is from when the simulator placed calls again itself.
    formerly: 'TERN_SIMULATOR_VOICE_RETRY_MS',
    kind: integer(0, 86_400_000),
    default: 60_000,
    section: 'messages',
    doc: 'delay before a voice call that was busy or not answered is placed again (3 calls in all)',
  }),

  // Retention
  /** Days kept: settled messages with their events; webhook deliveries; voice recordings. */
  retention: {
    messageDays: setting({
      env: 'TERN_RETENTION_DAYS',
      kind: days,
      default: 90,
      section: 'retention',
      doc: 'settled messages (delivered, failed, cancelled, received) with their events, webhook deliveries and voice recordings, unrouted inbound messages, past RCS conversations and settled one-time passwords',
    }),
    webhookDays: setting({
      env: 'TERN_WEBHOOK_RETENTION_DAYS',
      kind: days,
      default: 30,
      section: 'retention',
      doc: 'webhook deliveries no longer pending, with their attempts',
    }),
    audioDays: setting({
      env: 'TERN_AUDIO_RETENTION_DAYS',
      kind: days,
      default: 30,
      section: 'retention',
      doc: 'stored text-to-speech recordings (`/voice/v1/messages/{id}/audio`)',
    }),
    auditDays: setting({
      env: 'TERN_AUDIT_RETENTION_DAYS',
      kind: days,
      default: 365,
      section: 'retention',
      doc: 'entries of the [audit log](audit.md) (who changed what), kept apart from messages',
    }),
    contentDays: optional({
      env: 'TERN_CONTENT_RETENTION_DAYS',
      kind: days,
      documentedDefault: 'kept as long as the message',
      section: 'retention',
      doc: "message texts (and template values, rich content, links, recordings) of settled messages, after which they are erased while the message, its price, status and consumption stay; an organisation's `contentRetentionDays` overrides it (see [Privacy](privacy.md))",
    }),
  },

  // Traffic limits, lockouts and fraud guards
  /** Requests a second by route group, per key and per organisation, where an organisation has no limits of its own. */
  trafficLimits: setting({
    env: 'TERN_RATE_LIMITS',
    kind: textWhere('`group=perKey[/perOrganisation]`, comma-separated (groups `send`, `read`, `lookup`, `admin`)', (s) =>
      parseTrafficLimits(s, DEFAULT_TRAFFIC_LIMITS),
    ),
    default: '',
    documentedDefault: `\`${trafficLimitsText}\``,
    section: 'traffic',
    doc: 'requests a second per key / per organisation by group, for organisations without limits of their own; groups left out keep their default, one number sets both; see [Traffic limits](operations.md#traffic-limits-and-lockouts)',
  }),
  /** Failed authentications a client address may make in a minute before it is locked out. */
  authFailuresPerMinute: setting({
    env: 'TERN_AUTH_FAILURES_PER_MINUTE',
    kind: integer(1, 1_000_000),
    default: 20,
    section: 'traffic',
    doc: 'failed authentications a client address may make in a minute before it is locked out',
  }),
  /** Requests of one organisation a node answers at once while other organisations have some (0: no limit). */
  organisationConcurrency: setting({
    env: 'TERN_ORGANISATION_CONCURRENCY',
    kind: integer(0, 100_000),
    default: 8,
    section: 'traffic',
    doc: 'requests of one organisation a node answers at once while other organisations have requests in progress; `0`: no turns',
  }),
  /** Take the client address from X-Forwarded-For (only behind a proxy that sets it: otherwise clients choose it). */
  trustProxy: setting({
    env: 'TERN_TRUST_PROXY',
    kind: boolean(),
    default: false,
    section: 'traffic',
    doc: 'take the client address from `X-Forwarded-For` (only behind a proxy that sets it)',
  }),
  /** One-time passwords: the cooldown between sends of a pending code, sends to a number an hour, the same code sent again. */
  otp: {
    cooldownSeconds: setting({
      env: 'TERN_OTP_COOLDOWN_SECONDS',
      kind: integer(0, 3_600),
      default: 30,
      section: 'traffic',
      doc: 'a one-time password is not sent again to a number sooner than this after its last send (`429`)',
    }),
    sendsPerHour: setting({
      env: 'TERN_OTP_SENDS_PER_HOUR',
      kind: integer(1, 1_000),
      default: 5,
      section: 'traffic',
      doc: 'one-time passwords sent to one number in any hour, resends and calls included',
    }),
    reuseCode: setting({
      env: 'TERN_OTP_REUSE_CODE',
      kind: boolean(),
      default: true,
      section: 'traffic',
      doc: 'a new request for a number with a pending code sends the same code; `false`: a new code',
    }),
  },
  /** Fraud guards' defaults: countries allowed besides an organisation's own, velocity limits of one-time passwords. */
  fraud: {
    allowedCountries: setting({
      env: 'TERN_ALLOWED_COUNTRIES',
      kind: textWhere('country codes, comma-separated', parseCountryList),
      default: '',
      documentedDefault: 'none',
      section: 'traffic',
      doc: 'countries (`BE,LU`) an organisation with a `defaultCountry` and no list of its own may send to besides it; see [Fraud guards](api/rest.md#fraud-guards)',
    }),
    velocityLimits: setting({
      env: 'TERN_VELOCITY_LIMITS',
      kind: textWhere('`PREFIX[/RANGE_DIGITS]=LIMIT/WINDOW`, comma-separated', parseVelocityLimits),
      default: '*/3=20/1m',
      section: 'traffic',
      doc: 'velocity limits of one-time passwords for organisations without their own (`*` every number; window in `s`, `m`, `h`); empty: none',
    }),
  },

  // Cluster and background work
  /** Node identity used in dispatch leases. */
  nodeId: setting({
    env: 'TERN_NODE_ID',
    kind: text(),
    default: () => `node-${process.pid}-${Math.random().toString(36).slice(2, 8)}`,
    documentedDefault: '`node-<pid>-<random>`',
    section: 'cluster',
    doc: 'node name used in dispatch leases',
  }),
  /** How long a node owns the messages it claimed for sending; after a crash another node takes them then. */
  dispatchLeaseMs: setting({
    env: 'TERN_DISPATCH_LEASE_SECONDS',
    kind: integer(1, 3_600, seconds),
    default: 30,
    section: 'cluster',
    doc: 'how long a node owns the messages it claimed; after a crash another node (or the restarted one) takes them over then',
  }),
  /**
   * How often a node looks on its own for work that no wake-up announced (a lost notification): one look at every
   * queue, and each sweep (expired messages, SMPP concatenated parts) when nothing else wakes it.
   */
  safetyPollMs: setting({
    env: 'TERN_SAFETY_POLL_SECONDS',
    kind: integer(1, 3_600, seconds),
    default: 30,
    section: 'cluster',
    doc: 'how often a node looks on its own for work no wake-up announced (one statement for every queue; the expiry sweeps likewise); it only matters if a wake-up is lost',
  }),
  /**
   * How far the JavaScript heap may grow past what the last full collection kept before the next one, in percent
   * (0: V8's own choice, which lets a busy node's heap reach several times its live data).
   */
  heapGrowthPercent: setting({
    env: 'TERN_HEAP_GROWTH_PERCENT',
    kind: integer(0, 1_000),
    default: 25,
    section: 'cluster',
    doc: "a full garbage collection runs once the JavaScript heap has grown this much past what the last one kept; `0`: V8's own choice, which lets a busy node's heap reach several times its live data",
  }),
} as const;
