// A client generated from /openapi.json by real generators (openapi-typescript's types, openapi-fetch's calls),
// compiled by tsc in strict mode, sends, reads and lists against a real Tern.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { createTenant, forEachDialect, startTestServer, type Tenant, type TestServer } from '../support/server.ts';
import { REPOSITORY, SDK } from './repository.ts';

const run = promisify(execFile);

const CLIENT = `import createClient from 'openapi-fetch';
import type { paths } from './schema.js';

const [baseUrl, apiKey, refClient] = process.argv.slice(2) as [string, string, string];
const client = createClient<paths>({ baseUrl, headers: { 'X-Api-Key': apiKey } });

const sent = await client.POST('/sms/v1/messages', {
  params: { header: { 'Idempotency-Key': refClient } },
  body: { recipient: { to: '33612345678' }, body: { text: 'from a generated client' }, refClient },
});
if (!sent.data) throw new Error('send: ' + JSON.stringify(sent.error));
const messageId: string = sent.data.messageId;

const read = await client.GET('/sms/v1/messages/{id}', { params: { path: { id: messageId } } });
if (!read.data) throw new Error('read: ' + JSON.stringify(read.error));

const list = await client.GET('/sms/v1/messages', { params: { query: { 'searchBy[refClient]': refClient, pageSize: 10 } } });
if (!list.data) throw new Error('list: ' + JSON.stringify(list.error));

const refused = await client.POST('/sms/v1/messages', { body: { recipient: { to: 'not a number' }, body: { text: 'x' } } });
const errorCode: string | undefined = refused.error?.errorCode;

console.log(JSON.stringify({
  sent: messageId,
  read: read.data.messageId,
  text: read.data.body?.text,
  listed: list.data.items.map((m) => m.messageId),
  page: list.data.page,
  errorCode,
  status: refused.response.status,
}));
`;

const TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    lib: ['ES2023', 'DOM'],
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    strict: true,
    noEmit: true,
    // The generated types are a .ts file of the program, checked; the libraries' declarations are not ours to check.
    skipLibCheck: true,
    types: ['node'],
  },
  files: ['client.ts'],
};

/** The client generated from one server's document and compiled, once for every run of the file. */
let compiled: Promise<string> | undefined;

async function generateAndCompile(url: string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'tern-generated-client-'));
  await run(process.execPath, [`${SDK}node_modules/openapi-typescript/bin/cli.js`, `${url}/openapi.json`, '--output', join(dir, 'schema.ts')]);
  writeFileSync(join(dir, 'client.ts'), CLIENT);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }));
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(TSCONFIG));
  mkdirSync(join(dir, 'node_modules'));
  symlinkSync(`${REPOSITORY}node_modules/openapi-fetch`, join(dir, 'node_modules', 'openapi-fetch'));
  symlinkSync(`${REPOSITORY}node_modules/@types`, join(dir, 'node_modules', '@types'));
  try {
    await run(process.execPath, [`${REPOSITORY}node_modules/typescript/bin/tsc`, '-p', join(dir, 'tsconfig.json')]);
  } catch (err) {
    const { stdout, stderr } = err as { stdout: string; stderr: string };
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`tsc refused the generated client:\n${stdout}${stderr}`);
  }
  return dir;
}

after(() => {
  void compiled?.then((dir) => rmSync(dir, { recursive: true, force: true })).catch(() => {});
});

forEachDialect('a client generated from /openapi.json', (dialect) => {
  let server: TestServer;
  let t: Tenant;
  before(async () => {
    server = await startTestServer(dialect);
    t = await createTenant(server, { balance: 100 });
  });
  after(() => server.stop());

  test('compiles with tsc --strict, then sends, reads and lists', async () => {
    compiled ??= generateAndCompile(server.url);
    const dir = await compiled;
    const refClient = `generated-${randomUUID()}`;
    // Node runs the TypeScript as it is (its types stripped), the same file tsc checked.
    const { stdout } = await run(process.execPath, [join(dir, 'client.ts'), server.url, t.key, refClient], { cwd: dir });
    const out = JSON.parse(stdout) as { sent: string; read: string; text: string; listed: string[]; page: number; errorCode: string; status: number };
    assert.equal(out.read, out.sent);
    assert.equal(out.text, 'from a generated client');
    assert.deepEqual(out.listed, [out.sent]);
    assert.equal(out.page, 1);
    assert.equal(out.status, 400);
    assert.equal(out.errorCode, '400.003');
  });
});
