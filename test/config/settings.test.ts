// The settings' declarations, the loader derived from them (values from the environment, `_FILE`, the configuration
// file, defaults; errors naming the setting as the user wrote it) and docs/configuration.md written from them.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { ConfigError, configurationDocument, loadConfig } from '../../src/config/index.ts';
import { boolean, integer, oneOf, text } from '../../src/config/kinds.ts';
import { readSettings } from '../../src/config/load.ts';
import { RULES } from '../../src/config/rules.ts';
import { optional, setting, settingsOf } from '../../src/config/setting.ts';
import { SETTINGS } from '../../src/config/settings.ts';
import { BEGIN, END, withSettings } from '../../src/config/document.ts';
import { DEFAULT_TRAFFIC_LIMITS } from '../../src/domain/traffic.ts';
import { TERN_MAIN } from '../support/process.ts';

const dir = mkdtempSync(join(tmpdir(), 'tern-settings-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
function file(name: string, content: string): string {
  const path = join(dir, `${files++}-${name}`);
  writeFileSync(path, content);
  return path;
}
const json = (settings: Record<string, unknown>): string => file('tern.json', JSON.stringify(settings));

/** The error `loadConfig(env)` throws, which must be a ConfigError. */
function refusal(env: NodeJS.ProcessEnv): ConfigError {
  try {
    loadConfig(env);
  } catch (err) {
    assert.ok(err instanceof ConfigError, `not a ConfigError: ${String(err)}`);
    return err;
  }
  assert.fail(`accepted: ${JSON.stringify(env)}`);
}

/** Every variable and its key in the configuration file, as they were before the declarations: none may change. */
const NAMES: Record<string, string> = {
  TERN_HTTP_HOST: 'httpHost',
  TERN_HTTP_PORT: 'httpPort',
  TERN_HTTP_KEEP_ALIVE_SECONDS: 'httpKeepAliveSeconds',
  TERN_HTTP_HEADERS_TIMEOUT_SECONDS: 'httpHeadersTimeoutSeconds',
  TERN_HTTP_REQUEST_TIMEOUT_SECONDS: 'httpRequestTimeoutSeconds',
  TERN_HTTP_IDLE_TIMEOUT_SECONDS: 'httpIdleTimeoutSeconds',
  TERN_HTTP_MAX_CONNECTIONS: 'httpMaxConnections',
  TERN_SMPP_HOST: 'smppHost',
  TERN_SMPP_PORT: 'smppPort',
  TERN_SMPP_WINDOW: 'smppWindow',
  TERN_SMPP_CONCAT_TIMEOUT_SECONDS: 'smppConcatTimeoutSeconds',
  TERN_SMPP_TLS_PORT: 'smppTlsPort',
  TERN_SMPP_TLS_CERT: 'smppTlsCert',
  TERN_SMPP_TLS_KEY: 'smppTlsKey',
  TERN_HTTPS_PORT: 'httpsPort',
  TERN_HTTPS_CERT: 'httpsCert',
  TERN_HTTPS_KEY: 'httpsKey',
  TERN_DATABASE_URL: 'databaseUrl',
  TERN_DB_STATEMENT_TIMEOUT_MS: 'dbStatementTimeoutMs',
  TERN_DB_CONNECT_TIMEOUT_MS: 'dbConnectTimeoutMs',
  TERN_DB_START_WAIT_SECONDS: 'dbStartWaitSeconds',
  TERN_ADMIN_KEY: 'adminKey',
  TERN_SECRET_KEY: 'secretKey',
  TERN_PUBLIC_URL: 'publicUrl',
  TERN_LOG_LEVEL: 'logLevel',
  TERN_LOG_FORMAT: 'logFormat',
  TERN_LOG_MASK_NUMBERS: 'logMaskNumbers',
  TERN_WEBHOOK_ALLOW_PRIVATE: 'webhookAllowPrivate',
  TERN_WEBHOOK_CONNECTIONS: 'webhookConnections',
  TERN_WEBHOOK_SOCKETS: 'webhookSockets',
  TERN_WEBHOOK_SOCKETS_PER_ORGANISATION: 'webhookSocketsPerOrganisation',
  TERN_WEBHOOK_RETRY_SCHEDULE: 'webhookRetrySchedule',
  TERN_MESSAGE_VALIDITY_SECONDS: 'messageValiditySeconds',
  TERN_LOOKUP_CACHE_DAYS: 'lookupCacheDays',
  TERN_SHORT_LINK_BASE: 'shortLinkBase',
  TERN_SHORT_LINK_DAYS: 'shortLinkDays',
  TERN_SIMULATOR_SUBMIT_LATENCY_MS: 'simulatorSubmitLatencyMs',
  TERN_SIMULATOR_RECEIPT_LATENCY_MS: 'simulatorReceiptLatencyMs',
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
  TERN_AUDIT_RETENTION_DAYS: 'auditRetentionDays',
  TERN_CONTENT_RETENTION_DAYS: 'contentRetentionDays',
  TERN_RATE_LIMITS: 'rateLimits',
  TERN_AUTH_FAILURES_PER_MINUTE: 'authFailuresPerMinute',
  TERN_ORGANISATION_CONCURRENCY: 'organisationConcurrency',
  TERN_TRUST_PROXY: 'trustProxy',
  TERN_OTP_COOLDOWN_SECONDS: 'otpCooldownSeconds',
  TERN_OTP_SENDS_PER_HOUR: 'otpSendsPerHour',
  TERN_OTP_REUSE_CODE: 'otpReuseCode',
  TERN_ALLOWED_COUNTRIES: 'allowedCountries',
  TERN_VELOCITY_LIMITS: 'velocityLimits',
};

describe('the declarations', () => {
  test('name every setting as before, each once, with its key in the configuration file', () => {
    const all = settingsOf(SETTINGS);
    assert.deepEqual(Object.fromEntries(all.map((s) => [s.env, s.fileKey])), NAMES);
    assert.equal(new Set(all.map((s) => s.env)).size, all.length);
    assert.deepEqual(
      all.flatMap((s) => (s.formerly === undefined ? [] : [s.formerly])),
      ['TERN_SIMULATOR_VOICE_RETRY_MS'],
    );
  });

  test('give the defaults they gave before', () => {
    const { nodeId, ...config } = loadConfig({});
    assert.match(nodeId, new RegExp(`^node-${process.pid}-[a-z0-9]{1,6}$`));
    assert.deepEqual(config, {
      httpHost: '0.0.0.0',
      httpPort: 8080,
      httpLimits: { keepAliveMs: 72_000, headersTimeoutMs: 10_000, requestTimeoutMs: 60_000, idleTimeoutMs: 60_000, maxConnections: 10_000 },
      httpsPort: null,
      httpsCert: null,
      httpsKey: null,
      smppHost: '0.0.0.0',
      smppPort: 8776,
      smppTlsPort: null,
      smppTlsCert: null,
      smppTlsKey: null,
      smppWindow: 10,
      smppConcatTimeoutMs: 60_000,
      publicUrl: null,
      databaseUrl: 'sqlite:./data/tern.db',
      dbStatementTimeoutMs: 10_000,
      dbConnectTimeoutMs: 5_000,
      dbStartWaitMs: 60_000,
      sqliteSynchronous: 'NORMAL',
      sqliteCacheMb: 16,
      adminKey: null,
      secretKey: null,
      logLevel: 'info',
      logFormat: null,
      logMaskNumbers: null,
      messageValiditySeconds: 172_800,
      lookupCacheDays: 30,
      shortLinkBase: null,
      shortLinkDays: 30,
      webhookAllowPrivate: false,
      webhookRetrySchedule: '30s,2m,10m,1h,5h,24h',
      webhookConnections: 8,
      webhookSockets: { total: 256, perOrganisation: 64 },
      simulator: { submitLatencyMs: 0, receiptLatencyMs: 50 },
      tts: { engine: 'wasm', workers: null },
      voiceRetryMs: 60_000,
      retention: { messageDays: 90, webhookDays: 30, audioDays: 30, auditDays: 365, contentDays: null },
      trafficLimits: DEFAULT_TRAFFIC_LIMITS,
      authFailuresPerMinute: 20,
      organisationConcurrency: 8,
      trustProxy: false,
      otp: { cooldownSeconds: 30, sendsPerHour: 5, reuseCode: true },
      fraud: { allowedCountries: [], velocityLimits: [{ prefix: '', rangeDigits: 3, limit: 20, windowSeconds: 60 }] },
      dispatchLeaseMs: 30_000,
      safetyPollMs: 30_000,
      heapGrowthPercent: 25,
      connectors: null,
      routes: null,
    });
  });
});

describe('kinds of value', () => {
  const refuses = (parse: () => unknown, message: RegExp) => assert.throws(parse, (err: unknown) => err instanceof Error && message.test(err.message));

  test('an integer within its bounds, as text (spaces around it) or a number of the file; anything else refused', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -5, max: 5 }),
        fc.integer({ min: 0, max: 10 }),
        fc.integer({ min: -100, max: 100 }),
        fc.constantFrom('', ' ', '\t'),
        (min, span, n, pad) => {
          const kind = integer(min, min + span);
          if (n >= min && n <= min + span) {
            assert.equal(kind.parse(`${pad}${n}${pad}`), n);
            assert.equal(kind.parse(n), n);
          } else {
            refuses(() => kind.parse(String(n)), new RegExp(`^must be an integer between ${min} and ${min + span}, got "${n}"$`));
          }
        },
      ),
      { seed: 4301, numRuns: 300 },
    );
    const kind = integer(0, 100, { scale: 1000 });
    assert.equal(kind.parse('7'), 7000, 'seconds kept in milliseconds');
    for (const bad of ['', '1.5', '1e2', '0x10', 'ten', '+5', '5 5', 1.5, true, null, [], {}]) {
      refuses(() => kind.parse(bad), /^must be an integer between 0 and 100, got /);
    }
  });

  test('a boolean in any of its spellings, any case; anything else refused', () => {
    fc.assert(
      fc.property(fc.constantFrom('true', '1', 'yes', 'on', 'false', '0', 'no', 'off'), fc.func(fc.boolean()), (word, upper) => {
        const written = [...word].map((c, i) => (upper(i) ? c.toUpperCase() : c)).join('');
        assert.equal(boolean().parse(written), ['true', '1', 'yes', 'on'].includes(word));
      }),
      { seed: 4302, numRuns: 100 },
    );
    assert.equal(boolean().parse(false), false);
    assert.equal(boolean().parse(1), true);
    fc.assert(
      fc.property(
        fc.string().filter((s) => !['true', '1', 'yes', 'on', 'false', '0', 'no', 'off'].includes(s.toLowerCase())),
        (s) => {
          refuses(() => boolean().parse(s), /^must be true or false, got /);
        },
      ),
      { seed: 4303, numRuns: 200 },
    );
  });

  test('a choice, its case folded where the setting ignores case', () => {
    const engine = oneOf(['wasm', 'espeak-ng'], { fold: 'lower', refusal: 'must be wasm or espeak-ng' });
    assert.equal(engine.parse('ESPEAK-NG'), 'espeak-ng');
    refuses(() => engine.parse('festival'), /^must be wasm or espeak-ng$/);
    const level = oneOf(['info', 'debug']);
    assert.equal(level.parse('debug'), 'debug');
    refuses(() => level.parse('DEBUG'), /^must be one of info, debug$/);
  });

  test('text: a string, or a number of the file read as its digits; a list, an object or a boolean refused', () => {
    assert.equal(text().parse('a b'), 'a b');
    assert.equal(text().parse(42), '42');
    for (const bad of [true, [], {}]) refuses(() => text().parse(bad), /^must be a string$/);
  });
});

describe('values from the environment, files and the configuration file', () => {
  test('good values of each kind are read; bad ones are refused naming the variable', () => {
    const config = loadConfig({
      TERN_HTTP_PORT: ' 9090 ',
      TERN_TRUST_PROXY: 'Yes',
      TERN_LOG_FORMAT: 'JSON',
      TERN_SQLITE_SYNCHRONOUS: 'full',
      TERN_PUBLIC_URL: 'https://sms.example.com//',
      TERN_DISPATCH_LEASE_SECONDS: '5',
      TERN_RATE_LIMITS: 'send=7',
    });
    assert.equal(config.httpPort, 9090);
    assert.equal(config.trustProxy, true);
    assert.equal(config.logFormat, 'json');
    assert.equal(config.sqliteSynchronous, 'FULL');
    assert.equal(config.publicUrl, 'https://sms.example.com');
    assert.equal(config.dispatchLeaseMs, 5000);
    assert.deepEqual(config.trafficLimits.send, { perKey: 7, perOrganisation: 7 });
    const cases: Array<[string, string, RegExp]> = [
      ['TERN_HTTP_PORT', '65536', /integer between 0 and 65535, got "65536"/],
      ['TERN_TRUST_PROXY', 'maybe', /must be true or false, got "maybe"/],
      ['TERN_LOG_LEVEL', 'loud', /must be one of fatal, error/],
      ['TERN_PUBLIC_URL', 'ftp://x', /http or https URL/],
      ['TERN_DB_STATEMENT_TIMEOUT_MS', '50', /0 \(no limit\) or at least 100 ms, got "50"/],
      ['TERN_RATE_LIMITS', 'send=0', /at least 1 a second/],
      ['TERN_VELOCITY_LIMITS', 'nonsense', /./],
      ['TERN_WEBHOOK_RETRY_SCHEDULE', '30 seconds', /comma-separated list/],
    ];
    for (const [name, value, message] of cases) {
      const err = refusal({ [name]: value });
      assert.equal(err.setting, name);
      assert.equal(err.file, undefined);
      assert.ok(err.message.startsWith(`invalid setting ${name}: `), err.message);
      assert.match(err.message, message);
    }
  });

  test('a value of the configuration file is refused naming its key there and the file', () => {
    const path = json({ httpPort: 'eighty', smppPort: 2775 });
    const err = refusal({ TERN_CONFIG: path });
    assert.equal(err.setting, 'httpPort');
    assert.equal(err.file, path);
    assert.equal(err.message, `invalid setting httpPort in ${path}: must be an integer between 0 and 65535, got "eighty"`);
    const yaml = file('tern.yaml', 'trustProxy: sometimes\n');
    assert.equal(refusal({ TERN_CONFIG: yaml }).message, `invalid setting trustProxy in ${yaml}: must be true or false, got "sometimes"`);
    assert.equal(refusal({ TERN_CONFIG: json({ httpHost: ['a'] }) }).setting, 'httpHost');
    // The same key set in the environment: the environment's value is the one read, and named.
    assert.equal(refusal({ TERN_CONFIG: path, TERN_HTTP_PORT: '-1' }).setting, 'TERN_HTTP_PORT');
    assert.equal(loadConfig({ TERN_CONFIG: path, TERN_HTTP_PORT: '81' }).httpPort, 81);
  });

  test('a value from <variable>_FILE is checked as the variable is and named by it; the file itself by _FILE', () => {
    assert.equal(refusal({ TERN_SMPP_WINDOW_FILE: file('window', '0\n') }).setting, 'TERN_SMPP_WINDOW');
    assert.equal(refusal({ TERN_SMPP_WINDOW_FILE: join(dir, 'absent') }).setting, 'TERN_SMPP_WINDOW_FILE');
  });

  test('the configuration file refuses a key of no setting, and still reads the former name of one', () => {
    const path = json({ httpPrt: 80 });
    assert.equal(refusal({ TERN_CONFIG: path }).message, `invalid setting TERN_CONFIG: unknown setting "httpPrt" in ${path}`);
    assert.equal(loadConfig({ TERN_CONFIG: json({ simulatorVoiceRetryMs: 5 }) }).voiceRetryMs, 5);
    assert.equal(loadConfig({ TERN_SIMULATOR_VOICE_RETRY_MS: '6' }).voiceRetryMs, 6);
    assert.equal(loadConfig({ TERN_SIMULATOR_VOICE_RETRY_MS: 'x', TERN_VOICE_RETRY_MS: '7' }).voiceRetryMs, 7, 'the new name wins, the old one unread');
    assert.equal(refusal({ TERN_SIMULATOR_VOICE_RETRY_MS: 'x' }).setting, 'TERN_SIMULATOR_VOICE_RETRY_MS');
    assert.equal(refusal({ TERN_CONFIG: json({ connectors: {} }) }).message, 'invalid setting TERN_CONFIG: "connectors" must be a list of objects');
  });
});

describe('tern serve', () => {
  test('stops before starting anything, with exit status 78 and the setting named as written', () => {
    const path = file('tern.yaml', 'smppWindow: 0\n');
    const data = join(dir, 'never-written.db');
    const r = spawnSync(process.execPath, [TERN_MAIN, 'serve'], {
      env: { PATH: process.env.PATH, TERN_CONFIG: path, TERN_DATABASE_URL: `sqlite:${data}` },
      encoding: 'utf8',
      timeout: 120_000,
    });
    assert.equal(r.status, 78, r.stderr);
    assert.equal(r.stderr, `tern: invalid setting smppWindow in ${path}: must be an integer between 1 and 1000, got "0"\n`);
    assert.equal(existsSync(data), false, 'no database made');
  });
});

describe('rules between settings', () => {
  test('name each setting as the user wrote it, wherever it was written', () => {
    let err = refusal({ TERN_CONFIG: json({ webhookSockets: 10, webhookSocketsPerOrganisation: 11 }) });
    assert.equal(err.setting, 'webhookSocketsPerOrganisation');
    assert.match(err.message, /in .*tern\.json: must not be more than webhookSockets \(10\)$/);
    err = refusal({ TERN_WEBHOOK_SOCKETS: '10', TERN_CONFIG: json({ webhookSocketsPerOrganisation: 11 }) });
    assert.equal(err.setting, 'webhookSocketsPerOrganisation');
    assert.match(err.message, /must not be more than TERN_WEBHOOK_SOCKETS \(10\)$/);
    err = refusal({ TERN_CONFIG: json({ httpsPort: 8443, httpsCert: '/c.pem' }) });
    assert.equal(err.setting, 'httpsPort');
    assert.match(err.message, /needs httpsCert and TERN_HTTPS_KEY \(PEM file paths\)$/);
    err = refusal({ TERN_HTTPS_KEY: '/k.pem' });
    assert.equal(err.message, 'invalid setting TERN_HTTPS_KEY: is set but TERN_HTTPS_PORT is not: HTTPS needs a port');
    err = refusal({ TERN_CONFIG: json({ databaseUrl: 'postgres://db/tern' }) });
    assert.equal(err.setting, 'TERN_SECRET_KEY');
    assert.equal(refusal({ TERN_HTTP_HEADERS_TIMEOUT_SECONDS: '61' }).setting, 'TERN_HTTP_HEADERS_TIMEOUT_SECONDS');
    assert.equal(
      refusal({ TERN_SMPP_TLS_PORT: '0', TERN_SMPP_TLS_CERT: '/c.pem' }).message,
      'invalid setting TERN_SMPP_TLS_PORT: needs TERN_SMPP_TLS_CERT and TERN_SMPP_TLS_KEY (PEM file paths)',
    );
  });

  test('are each said in the documentation', () => {
    const doc = configurationDocument(`${BEGIN}\n${END}\n`);
    for (const rule of RULES) assert.ok(doc.includes(`- ${rule.says}.`), rule.says);
  });
});

describe('the loader', () => {
  const tree = {
    port: setting({ env: 'X_PORT', kind: integer(1, 9), default: 5, section: 'listeners', doc: 'a port' }),
    pin: optional({ env: 'X_PIN', kind: integer(0, 9999), documentedDefault: 'unset', section: 'database', doc: 'a pin', secret: true }),
    nested: { name: setting({ env: 'X_NAME', kind: text(), default: () => 'worked out', section: 'logs', doc: 'a name' }) },
  };

  test('gives a tree of values shaped as the tree of settings', () => {
    assert.deepEqual(readSettings(tree, [], {}), { port: 5, pin: null, nested: { name: 'worked out' } });
    assert.deepEqual(readSettings(tree, [], { X_PORT: '7', X_PIN: '0042' }), { port: 7, pin: 42, nested: { name: 'worked out' } });
  });

  test('never repeats a secret in an error', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 12 }).filter((s) => !/^\s*-?\d+\s*$/.test(s)),
        (pin) => {
          const err = (() => {
            try {
              readSettings(tree, [], { X_PIN: pin });
            } catch (e) {
              return e as ConfigError;
            }
            assert.fail('accepted');
          })();
          assert.equal(err.setting, 'X_PIN');
          assert.ok(!err.message.includes(`"${pin}"`), err.message);
        },
      ),
      { seed: 4304, numRuns: 100 },
    );
    assert.ok(refusal({ TERN_DATABASE_URL: 'mysql://root:hunter2@db' }).message.indexOf('hunter2') < 0);
  });
});

/** The repository's root: the first folder above this file holding Tern's package.json and docs/. */
function repositoryRoot(): string {
  let at = dirname(fileURLToPath(import.meta.url));
  while (!(existsSync(join(at, 'package.json')) && existsSync(join(at, 'docs', 'configuration.md')))) {
    const parent = dirname(at);
    if (parent === at) throw new Error('no repository root');
    at = parent;
  }
  return at;
}

describe('docs/configuration.md', () => {
  test('holds the settings as their declarations say (refresh it with `npm run docs:settings`)', () => {
    const document = readFileSync(join(repositoryRoot(), 'docs', 'configuration.md'), 'utf8');
    assert.ok(
      configurationDocument(document) === document,
      'docs/configuration.md is stale: its tables of settings differ from src/config/settings.ts; run `npm run docs:settings`',
    );
  });

  test('lists every setting with its file key and default, in place of what the markers held', () => {
    const generated = configurationDocument(`intro\n${BEGIN}\nold table\n${END}\nrest\n`);
    assert.ok(generated.startsWith(`intro\n${BEGIN}\n`) && generated.endsWith(`${END}\nrest\n`));
    assert.ok(!generated.includes('old table'));
    for (const s of settingsOf(SETTINGS)) assert.ok(generated.includes(`| \`${s.env}\` | \`${s.fileKey}\` |`), s.env);
    assert.match(generated, /\| `TERN_HTTP_PORT` \| `httpPort` \| `8080` \| 0–65,535/);
    assert.throws(() => withSettings('no markers', 'x'), /markers/);
  });
});
