import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { DEFAULT_TRAFFIC_LIMITS, parseTrafficLimits, type TrafficLimits } from './core/domain/traffic.ts';
import { parseCountryList, parseVelocityLimits, type VelocityLimit } from './core/domain/fraud-guards.ts';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

/** `pretty`: human-readable lines; `json`: one JSON object a line; null: pretty on a terminal, JSON otherwise. */
export type LogFormat = 'pretty' | 'json';

export interface SimulatorConfig {
  /** Delay before the simulated operator answers a submit, in ms. */
  submitLatencyMs: number;
  /** Delay between the submit and the delivery receipt, in ms. */
  receiptLatencyMs: number;
}

export interface TernConfig {
  httpHost: string;
  httpPort: number;
  smppHost: string;
  smppPort: number;
  /** deliver_sm (receipts, MO) sent on one SMPP session and not yet answered, at most. */
  smppWindow: number;
  smppTlsPort: number | null;
  smppTlsCert: string | null;
  smppTlsKey: string | null;
  /** The same application over TLS (PEM files, reloaded when they change), on the HTTP host. */
  httpsPort: number | null;
  httpsCert: string | null;
  httpsKey: string | null;
  databaseUrl: string;
  adminKey: string | null;
  /** Encrypts secrets kept in the database (operator passwords and API keys, webhook signing secrets). */
  secretKey: string | null;
  publicUrl: string | null;
  logLevel: LogLevel;
  logFormat: LogFormat | null;
  webhookAllowPrivate: boolean;
  /** Webhook requests in flight to one origin (scheme, host and port) at once, per node. */
  webhookConnections: number;
  webhookRetrySchedule: string;
  /** Validity of a message at the operator before it expires, in seconds. */
  messageValiditySeconds: number;
  simulator: SimulatorConfig;
  /** Delay before a voice call whose line was busy or that nobody answered is placed again, in ms. */
  voiceRetryMs: number;
  /** Text-to-speech: eSpeak NG compiled to WebAssembly (no system package), or the espeak-ng program; worker threads (null: the default). */
  tts: { engine: 'wasm' | 'espeak-ng'; workers: number | null };
  /**
   * Connectors and routes from the configuration file (null when the file has no such section): created or
   * overwritten by name at start; those the file named before and no longer does are removed.
   */
  connectors: Array<Record<string, unknown>> | null;
  routes: Array<Record<string, unknown>> | null;
  /** Node identity used in dispatch leases. */
  nodeId: string;
  /** How long a node owns the messages it claimed for sending; after a crash another node takes them then. */
  dispatchLeaseMs: number;
  /**
   * How often a node looks on its own for work that no wake-up announced (a lost notification): one look at every
   * queue, and each sweep (expired messages, SMPP concatenated parts) when nothing else wakes it.
   */
  safetyPollMs: number;
  /** SQLite durability: NORMAL survives a crash of Tern, FULL also a crash of the machine (an fsync per commit). */
  sqliteSynchronous: 'NORMAL' | 'FULL';
  /** SQLite's page cache, MiB (the operating system's file cache keeps the rest of the database at hand). */
  sqliteCacheMb: number;
  /**
   * How far the JavaScript heap may grow past what the last full collection kept before the next one, in percent
   * (0: V8's own choice, which lets a busy node's heap reach several times its live data).
   */
  heapGrowthPercent: number;
  /** Days kept: settled messages with their events; webhook deliveries; voice recordings. */
  retention: { messageDays: number; webhookDays: number; audioDays: number };
  /** Requests a second by route group, per key and per organisation, where an organisation has no limits of its own. */
  trafficLimits: TrafficLimits;
  /** Failed authentications a client address may make in a minute before it is locked out. */
  authFailuresPerMinute: number;
  /** Requests of one organisation a node answers at once while other organisations have some (0: no limit). */
  organisationConcurrency: number;
  /** Take the client address from X-Forwarded-For (only behind a proxy that sets it: otherwise clients choose it). */
  trustProxy: boolean;
  /** One-time passwords: the cooldown between sends of a pending code, sends to a number an hour, the same code sent again. */
  otp: { cooldownSeconds: number; sendsPerHour: number; reuseCode: boolean };
  /** Fraud guards' defaults: countries allowed besides an organisation's own, velocity limits of one-time passwords. */
  fraud: { allowedCountries: string[]; velocityLimits: VelocityLimit[] };
}

export class ConfigError extends Error {
  constructor(
    readonly setting: string,
    message: string,
  ) {
    super(`invalid setting ${setting}: ${message}`);
    this.name = 'ConfigError';
  }
}

type Source = Record<string, unknown>;

/** Setting name in the environment → key in the optional TERN_CONFIG file. */
const SETTINGS = {
  TERN_HTTP_HOST: 'httpHost',
  TERN_HTTP_PORT: 'httpPort',
  TERN_SMPP_HOST: 'smppHost',
  TERN_SMPP_PORT: 'smppPort',
  TERN_SMPP_WINDOW: 'smppWindow',
  TERN_SMPP_TLS_PORT: 'smppTlsPort',
  TERN_SMPP_TLS_CERT: 'smppTlsCert',
  TERN_SMPP_TLS_KEY: 'smppTlsKey',
  TERN_HTTPS_PORT: 'httpsPort',
  TERN_HTTPS_CERT: 'httpsCert',
  TERN_HTTPS_KEY: 'httpsKey',
  TERN_DATABASE_URL: 'databaseUrl',
  TERN_ADMIN_KEY: 'adminKey',
  TERN_SECRET_KEY: 'secretKey',
  TERN_PUBLIC_URL: 'publicUrl',
  TERN_LOG_LEVEL: 'logLevel',
  TERN_LOG_FORMAT: 'logFormat',
  TERN_WEBHOOK_ALLOW_PRIVATE: 'webhookAllowPrivate',
  TERN_WEBHOOK_CONNECTIONS: 'webhookConnections',
  TERN_WEBHOOK_RETRY_SCHEDULE: 'webhookRetrySchedule',
  TERN_MESSAGE_VALIDITY_SECONDS: 'messageValiditySeconds',
  TERN_SIMULATOR_SUBMIT_LATENCY_MS: 'simulatorSubmitLatencyMs',
  TERN_SIMULATOR_RECEIPT_LATENCY_MS: 'simulatorReceiptLatencyMs',
  TERN_SIMULATOR_VOICE_RETRY_MS: 'simulatorVoiceRetryMs',
  TERN_VOICE_RETRY_MS: 'voiceRetryMs',
  TERN_TTS_ENGINE: 'ttsEngine',
  TERN_TTS_WORKERS: 'ttsWorkers',
  TERN_NODE_ID: 'nodeId',
  TERN_DISPATCH_LEASE_SECONDS: 'dispatchLeaseSeconds',
  TERN_SAFETY_POLL_SECONDS: 'safetyPollSeconds',
  TERN_SQLITE_SYNCHRONOUS: 'sqliteSynchronous',
  TERN_SQLITE_CACHE_MB: 'sqliteCacheMb',
  TERN_HEAP_GROWTH_PERCENT: 'heapGrowthPercent',
  TERN_RETENTION_DAYS: 'retentionDays',
  TERN_WEBHOOK_RETENTION_DAYS: 'webhookRetentionDays',
  TERN_AUDIO_RETENTION_DAYS: 'audioRetentionDays',
  TERN_RATE_LIMITS: 'rateLimits',
  TERN_AUTH_FAILURES_PER_MINUTE: 'authFailuresPerMinute',
  TERN_ORGANISATION_CONCURRENCY: 'organisationConcurrency',
  TERN_TRUST_PROXY: 'trustProxy',
  TERN_OTP_COOLDOWN_SECONDS: 'otpCooldownSeconds',
  TERN_OTP_SENDS_PER_HOUR: 'otpSendsPerHour',
  TERN_OTP_REUSE_CODE: 'otpReuseCode',
  TERN_ALLOWED_COUNTRIES: 'allowedCountries',
  TERN_VELOCITY_LIMITS: 'velocityLimits',
} as const;

type SettingName = keyof typeof SETTINGS;

/** Sections only the configuration file has: operator connections and routes, kept in git by some operators. */
const FILE_SECTIONS = ['connectors', 'routes'] as const;

function section(file: Source, name: (typeof FILE_SECTIONS)[number]): Array<Record<string, unknown>> | null {
  const v = file[name];
  if (v === undefined || v === null) return null;
  if (!Array.isArray(v) || v.some((e) => e === null || typeof e !== 'object' || Array.isArray(e))) {
    throw new ConfigError('TERN_CONFIG', `"${name}" must be a list of objects`);
  }
  return v as Array<Record<string, unknown>>;
}

const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function readFileSettings(path: string): Source {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError('TERN_CONFIG', `cannot read ${path}: ${(err as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = /\.ya?ml$/i.test(path) ? parseYaml(text) : JSON.parse(text);
  } catch (err) {
    throw new ConfigError('TERN_CONFIG', `cannot parse ${path}: ${(err as Error).message}`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ConfigError('TERN_CONFIG', `${path} must hold an object of settings`);
  }
  const known = new Set<string>([...Object.values(SETTINGS), ...FILE_SECTIONS]);
  for (const key of Object.keys(parsed)) {
    if (!known.has(key)) throw new ConfigError('TERN_CONFIG', `unknown setting "${key}" in ${path}`);
  }
  return parsed as Source;
}

/**
 * Builds the configuration from the environment, over an optional file named by TERN_CONFIG, over defaults.
 * Every value is validated; the first bad one throws a ConfigError naming the setting.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): TernConfig {
  const file = env.TERN_CONFIG ? readFileSettings(env.TERN_CONFIG) : {};
  const raw = (name: SettingName): unknown => {
    const fromEnv = env[name];
    if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
    return file[SETTINGS[name]];
  };
  const str = (name: SettingName, fallback: string | null): string | null => {
    const v = raw(name);
    if (v === undefined || v === null) return fallback;
    if (typeof v !== 'string' && typeof v !== 'number') throw new ConfigError(name, 'must be a string');
    return String(v);
  };
  const int = (name: SettingName, fallback: number | null, min: number, max: number): number | null => {
    const v = raw(name);
    if (v === undefined || v === null) return fallback;
    const n = typeof v === 'number' ? v : /^\s*-?\d+\s*$/.test(String(v)) ? Number(v) : Number.NaN;
    if (!Number.isInteger(n) || n < min || n > max) {
      throw new ConfigError(name, `must be an integer between ${min} and ${max}, got "${String(v)}"`);
    }
    return n;
  };
  const bool = (name: SettingName, fallback: boolean): boolean => {
    const v = raw(name);
    if (v === undefined || v === null) return fallback;
    if (typeof v === 'boolean') return v;
    const s = String(v).toLowerCase();
    if (['true', '1', 'yes', 'on'].includes(s)) return true;
    if (['false', '0', 'no', 'off'].includes(s)) return false;
    throw new ConfigError(name, `must be true or false, got "${String(v)}"`);
  };

  const databaseUrl = str('TERN_DATABASE_URL', 'sqlite:./data/tern.db')!;
  if (!/^sqlite:.+/.test(databaseUrl) && !/^postgres(ql)?:\/\/.+/.test(databaseUrl)) {
    throw new ConfigError('TERN_DATABASE_URL', 'must be sqlite:<path> or postgres://…');
  }
  const publicUrl = str('TERN_PUBLIC_URL', null);
  if (publicUrl !== null) {
    let u: URL;
    try {
      u = new URL(publicUrl);
    } catch {
      throw new ConfigError('TERN_PUBLIC_URL', `"${publicUrl}" is not an absolute URL`);
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') {
      throw new ConfigError('TERN_PUBLIC_URL', 'must be an http or https URL');
    }
  }
  const logLevel = str('TERN_LOG_LEVEL', 'info')! as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError('TERN_LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}`);
  }
  const logFormat = str('TERN_LOG_FORMAT', null)?.toLowerCase() ?? null;
  if (logFormat !== null && logFormat !== 'pretty' && logFormat !== 'json') {
    throw new ConfigError('TERN_LOG_FORMAT', 'must be pretty (human-readable lines) or json');
  }
  const secretKey = str('TERN_SECRET_KEY', null);
  if (secretKey !== null && secretKey.length < 32) {
    throw new ConfigError('TERN_SECRET_KEY', 'must be at least 32 characters long (e.g. `openssl rand -base64 32`)');
  }
  if (secretKey === null && databaseUrl.startsWith('postgres')) {
    throw new ConfigError('TERN_SECRET_KEY', 'is required with PostgreSQL: every node seals and opens the secrets kept in the database with it (e.g. `openssl rand -base64 32`, the same on all nodes)');
  }
  const adminKey = str('TERN_ADMIN_KEY', null);
  if (adminKey !== null && adminKey.length < 16) {
    throw new ConfigError('TERN_ADMIN_KEY', 'must be at least 16 characters long');
  }
  const smppTlsPort = int('TERN_SMPP_TLS_PORT', null, 0, 65535);
  const smppTlsCert = str('TERN_SMPP_TLS_CERT', null);
  const smppTlsKey = str('TERN_SMPP_TLS_KEY', null);
  if (smppTlsPort !== null && (smppTlsCert === null || smppTlsKey === null)) {
    throw new ConfigError('TERN_SMPP_TLS_PORT', 'needs TERN_SMPP_TLS_CERT and TERN_SMPP_TLS_KEY (PEM file paths)');
  }
  const httpsPort = int('TERN_HTTPS_PORT', null, 0, 65535);
  const httpsCert = str('TERN_HTTPS_CERT', null);
  const httpsKey = str('TERN_HTTPS_KEY', null);
  if (httpsPort !== null && (httpsCert === null || httpsKey === null)) {
    throw new ConfigError('TERN_HTTPS_PORT', 'needs TERN_HTTPS_CERT and TERN_HTTPS_KEY (PEM file paths)');
  }
  if (httpsPort === null && (httpsCert !== null || httpsKey !== null)) {
    throw new ConfigError(httpsCert !== null ? 'TERN_HTTPS_CERT' : 'TERN_HTTPS_KEY', 'is set but TERN_HTTPS_PORT is not: HTTPS needs a port');
  }
  const sqliteSynchronous = str('TERN_SQLITE_SYNCHRONOUS', 'NORMAL')!.toUpperCase();
  if (sqliteSynchronous !== 'NORMAL' && sqliteSynchronous !== 'FULL') {
    throw new ConfigError('TERN_SQLITE_SYNCHRONOUS', 'must be NORMAL (survives a crash of Tern) or FULL (also a power loss)');
  }
  let trafficLimits: TrafficLimits;
  try {
    trafficLimits = parseTrafficLimits(str('TERN_RATE_LIMITS', '')!, DEFAULT_TRAFFIC_LIMITS);
  } catch (err) {
    throw new ConfigError('TERN_RATE_LIMITS', (err as Error).message);
  }
  const ttsEngine = str('TERN_TTS_ENGINE', 'wasm')!.toLowerCase();
  if (ttsEngine !== 'wasm' && ttsEngine !== 'espeak-ng') {
    throw new ConfigError('TERN_TTS_ENGINE', 'must be wasm (eSpeak NG built in) or espeak-ng (the program of the Debian package)');
  }
  const fraudSetting = <T>(name: SettingName, fallback: string, parse: (text: string) => T): T => {
    try {
      return parse(str(name, fallback)!);
    } catch (err) {
      throw new ConfigError(name, (err as Error).message);
    }
  };
  const fraud = {
    allowedCountries: fraudSetting('TERN_ALLOWED_COUNTRIES', '', parseCountryList),
    velocityLimits: fraudSetting('TERN_VELOCITY_LIMITS', '*/3=20/1m', parseVelocityLimits),
  };
  const retrySchedule = str('TERN_WEBHOOK_RETRY_SCHEDULE', '30s,2m,10m,1h,5h,24h')!;
  if (!/^\s*\d+(ms|s|m|h|d)\s*(,\s*\d+(ms|s|m|h|d)\s*)*$/.test(retrySchedule)) {
    throw new ConfigError('TERN_WEBHOOK_RETRY_SCHEDULE', 'must be a comma-separated list such as "30s,2m,10m,1h"');
  }

  return {
    httpHost: str('TERN_HTTP_HOST', '0.0.0.0')!,
    httpPort: int('TERN_HTTP_PORT', 8080, 0, 65535)!,
    smppHost: str('TERN_SMPP_HOST', '0.0.0.0')!,
    smppPort: int('TERN_SMPP_PORT', 8776, 0, 65535)!,
    smppWindow: int('TERN_SMPP_WINDOW', 10, 1, 1_000)!,
    smppTlsPort,
    smppTlsCert,
    smppTlsKey,
    httpsPort,
    httpsCert,
    httpsKey,
    databaseUrl,
    adminKey,
    secretKey,
    publicUrl: publicUrl?.replace(/\/+$/, '') ?? null,
    logLevel,
    logFormat: logFormat as LogFormat | null,
    webhookAllowPrivate: bool('TERN_WEBHOOK_ALLOW_PRIVATE', false),
    webhookConnections: int('TERN_WEBHOOK_CONNECTIONS', 8, 1, 1_000)!,
    webhookRetrySchedule: retrySchedule,
    messageValiditySeconds: int('TERN_MESSAGE_VALIDITY_SECONDS', 172_800, 1, 30 * 86_400)!,
    simulator: {
      submitLatencyMs: int('TERN_SIMULATOR_SUBMIT_LATENCY_MS', 0, 0, 600_000)!,
      receiptLatencyMs: int('TERN_SIMULATOR_RECEIPT_LATENCY_MS', 50, 0, 3_600_000)!,
    },
    // TERN_SIMULATOR_VOICE_RETRY_MS is this setting's former name, from when the simulator placed calls again itself.
    voiceRetryMs: int('TERN_VOICE_RETRY_MS', null, 0, 86_400_000) ?? int('TERN_SIMULATOR_VOICE_RETRY_MS', 60_000, 0, 86_400_000)!,
    tts: { engine: ttsEngine, workers: int('TERN_TTS_WORKERS', null, 1, 64) },
    dispatchLeaseMs: int('TERN_DISPATCH_LEASE_SECONDS', 30, 1, 3_600)! * 1000,
    safetyPollMs: int('TERN_SAFETY_POLL_SECONDS', 30, 1, 3_600)! * 1000,
    sqliteSynchronous,
    sqliteCacheMb: int('TERN_SQLITE_CACHE_MB', 16, 1, 65_536)!,
    heapGrowthPercent: int('TERN_HEAP_GROWTH_PERCENT', 25, 0, 1_000)!,
    trafficLimits,
    authFailuresPerMinute: int('TERN_AUTH_FAILURES_PER_MINUTE', 20, 1, 1_000_000)!,
    organisationConcurrency: int('TERN_ORGANISATION_CONCURRENCY', 8, 0, 100_000)!,
    trustProxy: bool('TERN_TRUST_PROXY', false),
    otp: {
      cooldownSeconds: int('TERN_OTP_COOLDOWN_SECONDS', 30, 0, 3_600)!,
      sendsPerHour: int('TERN_OTP_SENDS_PER_HOUR', 5, 1, 1_000)!,
      reuseCode: bool('TERN_OTP_REUSE_CODE', true),
    },
    fraud,
    retention: {
      messageDays: int('TERN_RETENTION_DAYS', 90, 1, 36_500)!,
      webhookDays: int('TERN_WEBHOOK_RETENTION_DAYS', 30, 1, 36_500)!,
      audioDays: int('TERN_AUDIO_RETENTION_DAYS', 30, 1, 36_500)!,
    },
    connectors: section(file, 'connectors'),
    routes: section(file, 'routes'),
    nodeId: str('TERN_NODE_ID', null) ?? `node-${process.pid}-${Math.random().toString(36).slice(2, 8)}`,
  };
}
