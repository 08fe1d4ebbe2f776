// The SDK's committed types are what openapi-typescript makes of the document the server serves today.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { startTestServer, type TestServer } from '../support/server.ts';
import { SDK } from './repository.ts';

let server: TestServer;
before(async () => {
  server = await startTestServer('sqlite');
});
after(() => server.stop());

test('packages/sdk/src/schema.d.ts is up to date with /openapi.json (else: npm run sdk:generate)', async () => {
  const res = await fetch(`${server.url}/openapi.json`);
  assert.equal(res.status, 200);
  const { schemaSource } = (await import(`${SDK}scripts/schema-source.mjs`)) as typeof import('../../packages/sdk/scripts/schema-source.mjs');
  const expected = await schemaSource(await res.json());
  const committed = readFileSync(`${SDK}src/schema.d.ts`, 'utf8');
  assert.ok(committed === expected, 'packages/sdk/src/schema.d.ts differs from what the document gives: run `npm run sdk:generate` and commit it');
});
