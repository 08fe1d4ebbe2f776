// The examples of packages/sdk/README.md are what they say: each compiles with tsc --strict against the SDK, and runs
// against a real Tern (but the webhook receiver, which listens until stopped: compiled only).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { createTenant, startTestServer, type Tenant, type TestServer } from '../support/server.ts';
import { REPOSITORY, SDK } from './repository.ts';

const run = promisify(execFile);

/** The README's TypeScript blocks, in order. */
function examples(): string[] {
  const readme = readFileSync(`${SDK}README.md`, 'utf8');
  return [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

/** A block that only continues the one before it uses its `tern` without importing. */
const PRELUDE = "import { Tern } from '@tern/sdk';\nconst tern = new Tern({ baseUrl: process.env.TERN_URL!, apiKey: process.env.TERN_API_KEY! });\n";

let server: TestServer;
let t: Tenant;
let rcs: Tenant;
let dir: string;
before(async () => {
  server = await startTestServer('sqlite');
  t = await createTenant(server, { balance: 100 });
  rcs = await createTenant(server, { balance: 100, type: 'RCS' });
  dir = mkdtempSync(join(tmpdir(), 'tern-sdk-readme-'));
  // @tern/sdk as an application installs it: its types the SDK's sources, its code the suite's build of them.
  const pkg = join(dir, 'node_modules', '@tern', 'sdk');
  mkdirSync(pkg, { recursive: true });
  symlinkSync(`${SDK}src`, join(pkg, 'src'));
  symlinkSync(`${REPOSITORY}.test-build/packages/sdk/src`, join(pkg, 'build'));
  writeFileSync(
    join(pkg, 'package.json'),
    JSON.stringify({ name: '@tern/sdk', type: 'module', exports: { '.': { types: './src/index.ts', default: './build/index.js' } } }),
  );
  symlinkSync(`${REPOSITORY}node_modules/@types`, join(dir, 'node_modules', '@types'));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }));
});
after(async () => {
  rmSync(dir, { recursive: true, force: true });
  await server.stop();
});

test('the README’s examples compile with tsc --strict and run against Tern', async () => {
  const blocks = examples();
  assert.ok(blocks.length >= 6, `${blocks.length} examples`);
  const files = blocks.map((block, i) => {
    const file = `example-${i}.ts`;
    writeFileSync(join(dir, file), `${block.includes('import ') ? '' : PRELUDE}${block}\nexport {};\n`);
    return file;
  });
  const compilerOptions = {
    target: 'ES2022',
    lib: ['ES2023'],
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    strict: true,
    noEmit: true,
    allowImportingTsExtensions: true,
    skipLibCheck: true,
    types: ['node'],
  };
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files }));
  await run(process.execPath, [`${REPOSITORY}node_modules/typescript/bin/tsc`, '-p', join(dir, 'tsconfig.json')]).catch((err: { stdout: string }) =>
    assert.fail(`tsc refused an example:\n${err.stdout}`),
  );

  const env = {
    ...process.env,
    TERN_URL: server.url,
    TERN_API_KEY: t.key,
    TERN_CHANNEL_ID: t.channelId,
    TERN_RCS_API_KEY: rcs.key,
    TERN_ADMIN_KEY: server.adminKey,
  };
  let ran = 0;
  for (const [i, block] of blocks.entries()) {
    if (block.includes('.listen(')) continue;
    await run(process.execPath, [files[i]!], { cwd: dir, env }).catch((err: { stderr: string }) =>
      assert.fail(`example ${i} failed:\n${block}\n${err.stderr}`),
    );
    ran++;
  }
  assert.ok(ran >= 5, `${ran} examples ran`);
});
