#!/usr/bin/env node
// Writes packages/sdk/src/schema.d.ts, the SDK's types, from the OpenAPI document of a Tern started here on a fresh
// SQLite database (the document depends on the routes alone, not on the configuration or the data):
//
//   npm run sdk:generate
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createApp } from '../src/app/index.ts';
import { loadConfig } from '../src/config/index.ts';
import { createLogger } from '../src/log-redaction.ts';
import { schemaSource } from '../packages/sdk/scripts/schema-source.mjs';

const target = fileURLToPath(new URL('../packages/sdk/src/schema.d.ts', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'tern-sdk-generate-'));
try {
  const config = loadConfig({
    TERN_HTTP_HOST: '127.0.0.1',
    TERN_HTTP_PORT: '0',
    TERN_SMPP_HOST: '127.0.0.1',
    TERN_SMPP_PORT: '0',
    TERN_DATABASE_URL: `sqlite:${join(dir, 'tern.db')}`,
    TERN_SECRET_KEY: 'sdk-generate-secret-key-0123456789abcdef',
    TERN_LOG_LEVEL: 'silent',
  });
  const app = await createApp(config, { logger: createLogger('silent') });
  const { httpPort } = await app.start();
  let document: unknown;
  try {
    const res = await fetch(`http://127.0.0.1:${httpPort}/openapi.json`);
    if (!res.ok) throw new Error(`GET /openapi.json: ${res.status}`);
    document = await res.json();
  } finally {
    await app.stop();
  }
  const source = await schemaSource(document);
  let before = '';
  try {
    before = readFileSync(target, 'utf8');
  } catch {}
  if (source === before) console.log('packages/sdk/src/schema.d.ts: up to date');
  else {
    writeFileSync(target, source);
    console.log('packages/sdk/src/schema.d.ts: written');
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
