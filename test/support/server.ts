import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe } from 'node:test';
import pg from 'pg';
import type { Logger } from 'pino';
import { createApp, type TernApp } from '../../src/app/index.ts';
import { loadConfig } from '../../src/config/index.ts';
import { createLogger } from '../../src/log-redaction.ts';
import { assertNoNulls } from './no-nulls.ts';

export type DialectName = 'sqlite' | 'postgres';

const PG_URL = process.env.TERN_TEST_DATABASE_URL;

/**
 * Declares the suite once per dialect. Without TERN_TEST_DATABASE_URL the PostgreSQL run is reported as skipped
 * with the reason, never silently dropped.
 */
export function forEachDialect(name: string, fn: (dialect: DialectName) => void): void {
  for (const dialect of ['sqlite', 'postgres'] as const) {
    if (dialect === 'postgres' && !PG_URL) {
      describe(`${name} [postgres]`, { skip: 'PostgreSQL not available: TERN_TEST_DATABASE_URL is not set' }, () => {});
      continue;
    }
    describe(`${name} [${dialect}]`, () => fn(dialect));
  }
}

export interface TestServer {
  app: TernApp;
  url: string;
  /** The SMPP server's port (127.0.0.1). */
  smppPort: number;
  /** The HTTPS listener's port, when TERN_HTTPS_PORT is set. */
  httpsPort?: number;
  adminKey: string;
  dialect: DialectName;
  stop(): Promise<void>;
}

export interface ApiResponse<T = any> {
  status: number;
  body: T;
  text: string;
  headers: Headers;
}

export const TEST_ADMIN_KEY = 'test-admin-key-0123456789';
/** Seals the secrets test servers keep; pass `TERN_SECRET_KEY: ''` for none (then SQLite makes a key file). */
export const TEST_SECRET_KEY = 'test-secret-key-0123456789abcdefghijklmnop';
/** TERN_RATE_LIMITS high enough that no test meets it by accident. */
export const UNLIMITED = 'send=1000000,read=1000000,lookup=1000000,admin=1000000';

/** A fresh database of the dialect: a SQLite file in a temporary folder, or a PostgreSQL schema of its own. */
export async function freshDatabase(dialect: DialectName): Promise<{ url: string; cleanup(): Promise<void> }> {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'tern-test-'));
    return { url: `sqlite:${join(dir, 'tern.db')}`, cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  await client.query(`create schema ${schema}`);
  await client.end();
  const u = new URL(PG_URL!);
  u.searchParams.set('schema', schema);
  // Test files run in parallel, each server with its own pool: keep well inside PostgreSQL's max_connections.
  u.searchParams.set('pool', '4');
  return {
    url: u.toString(),
    cleanup: async () => {
      const c = new pg.Client({ connectionString: PG_URL });
      await c.connect();
      await c.query(`drop schema if exists ${schema} cascade`);
      await c.end();
    },
  };
}

/**
 * Starts a real Tern on ephemeral ports with a fresh database of the given dialect; its logs go to `opts.logger`, else
 * to standard output at TERN_TEST_LOG_LEVEL (silent by default).
 */
export async function startTestServer(dialect: DialectName = 'sqlite', env: Record<string, string> = {}, opts: { logger?: Logger } = {}): Promise<TestServer> {
  const database = await freshDatabase(dialect);
  const config = loadConfig({
    TERN_HTTP_HOST: '127.0.0.1',
    TERN_HTTP_PORT: '0',
    TERN_SMPP_HOST: '127.0.0.1',
    TERN_SMPP_PORT: '0',
    TERN_DATABASE_URL: database.url,
    TERN_ADMIN_KEY: TEST_ADMIN_KEY,
    TERN_LOG_LEVEL: 'silent',
    TERN_WEBHOOK_ALLOW_PRIVATE: 'true',
    TERN_SIMULATOR_RECEIPT_LATENCY_MS: '5',
    TERN_SECRET_KEY: TEST_SECRET_KEY,
    // Tests send bursts from one address and try bad keys on purpose: limits are tested on their own.
    TERN_RATE_LIMITS: UNLIMITED,
    TERN_AUTH_FAILURES_PER_MINUTE: '1000000',
    ...env,
  });
  const app = await createApp(config, { logger: opts.logger ?? createLogger(process.env.TERN_TEST_LOG_LEVEL ?? 'silent') });
  const { httpPort, smppPort, httpsPort } = await app.start();
  let stopped = false;
  return {
    app,
    url: `http://127.0.0.1:${httpPort}`,
    smppPort,
    ...(httpsPort !== undefined && { httpsPort }),
    adminKey: TEST_ADMIN_KEY,
    dialect,
    async stop() {
      if (stopped) return;
      stopped = true;
      await app.stop();
      await database.cleanup();
    },
  };
}

export interface RequestOptions {
  key?: string | null;
  body?: unknown;
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
}

export async function request<T = any>(server: { url: string }, method: string, path: string, opts: RequestOptions = {}): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.key) headers['x-api-key'] = opts.key;
  let body: string | Buffer | undefined;
  if (opts.rawBody !== undefined) body = opts.rawBody;
  else if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(server.url + path, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  if ((res.headers.get('content-type') ?? '').includes('json') && text !== '') {
    parsed = JSON.parse(text);
    // Every JSON answer of every route a test calls: nothing Tern answers carries a null.
    assertNoNulls(parsed, `${method} ${path}`);
  }
  return { status: res.status, body: parsed as T, text, headers: res.headers };
}

export interface Tenant {
  organisationId: string;
  channelId: string;
  key: string;
  credentialId: string;
}

export interface TenantOptions {
  type?: 'SMS' | 'RCS' | 'VOICE';
  flow?: 'TRANSACTIONAL' | 'MARKETING' | 'OTP';
  roles?: string[];
  balance?: number;
  parentOrganisationId?: string;
  /** Its parent pays for it (with parentOrganisationId). */
  parentBilling?: boolean;
  channel?: Record<string, unknown>;
  name?: string;
}

/** An organisation with one channel and one key, created through the admin API. */
export async function createTenant(server: Pick<TestServer, 'url' | 'adminKey'>, opts: TenantOptions = {}): Promise<Tenant> {
  const admin = server.adminKey;
  const org = await request(server, 'POST', '/admin/v1/organisations', {
    key: admin,
    body: {
      name: opts.name ?? 'Test org',
      ...(opts.parentOrganisationId ? { parentOrganisationId: opts.parentOrganisationId } : {}),
      ...(opts.parentBilling !== undefined ? { parentBilling: opts.parentBilling } : {}),
    },
  });
  if (org.status !== 201) throw new Error(`organisation: ${org.status} ${org.text}`);
  const channel = await request(server, 'POST', `/admin/v1/organisations/${org.body.organisationId}/channels`, {
    key: admin,
    body: { name: 'Test channel', type: opts.type ?? 'SMS', flow: opts.flow ?? 'TRANSACTIONAL', ...opts.channel },
  });
  if (channel.status !== 201) throw new Error(`channel: ${channel.status} ${channel.text}`);
  const cred = await request(server, 'POST', `/admin/v1/channels/${channel.body.channelId}/credentials`, {
    key: admin,
    body: { name: 'Test key', roles: opts.roles ?? ['ADMIN'] },
  });
  if (cred.status !== 201) throw new Error(`credential: ${cred.status} ${cred.text}`);
  if (opts.balance !== undefined && opts.balance > 0) {
    const credit = await request(server, 'POST', `/admin/v1/organisations/${org.body.organisationId}/credit`, {
      key: admin,
      body: { amount: opts.balance },
    });
    if (credit.status !== 201) throw new Error(`credit: ${credit.status} ${credit.text}`);
  }
  return {
    organisationId: org.body.organisationId,
    channelId: channel.body.channelId,
    key: cred.body.value,
    credentialId: cred.body.credentialId,
  };
}

/** Checks an error answer: status, errorCode, the exact `{errorCode, message, detail}` shape, and the detail. */
export function assertError(res: { status: number; body: any }, status: number, code: string, detail?: RegExp): void {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.equal(res.body.errorCode, code, JSON.stringify(res.body));
  assert.equal(typeof res.body.message, 'string');
  assert.equal(typeof res.body.detail, 'string');
  assert.deepEqual(Object.keys(res.body).sort(), ['detail', 'errorCode', 'message']);
  if (detail) assert.match(res.body.detail, detail);
}
