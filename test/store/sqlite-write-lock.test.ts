import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { test } from 'node:test';
import { inTransaction, openStore } from '../../src/store/db.ts';

// Another connection to the file holding its write lock for a moment — the checkpointer truncating the log, a CLI
// command — is waited for (busy_timeout), not failed: a transaction that reads and then writes would otherwise get
// SQLITE_BUSY at its first write, at once. The other connection is another process's, as it would be: this process's
// thread waits on the lock.
const HOLD_LOCK = `
const db = new (require('better-sqlite3'))(process.argv[1]);
db.exec('begin immediate');
process.stdout.write('locked\\n');
setTimeout(() => { db.exec('commit'); process.stdout.write('released\\n'); db.close(); }, 300);
`;

test('SQLite: a transaction that reads, then writes, waits for another connection’s write lock', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tern-write-lock-'));
  const file = join(dir, 'tern.db');
  const store = await openStore(`sqlite:${file}`, 'write-lock-test');
  const other = spawn(process.execPath, ['-e', HOLD_LOCK, file], { stdio: ['ignore', 'pipe', 'inherit'] });
  let said = '';
  other.stdout.on('data', (b: Buffer) => (said += b.toString()));
  try {
    while (!said.includes('locked')) await once(other.stdout, 'data');
    const ids = await inTransaction(store, async (trx) => {
      const before = await trx.selectFrom('nodes').select('id').execute();
      await trx.insertInto('nodes').values({ id: 'write-lock-node', started_at: Date.now(), seen_at: Date.now() }).execute();
      return before.length;
    });
    assert.equal(typeof ids, 'number');
    const row = await store.db.selectFrom('nodes').select('id').where('id', '=', 'write-lock-node').executeTakeFirst();
    assert.equal(row?.id, 'write-lock-node');
  } finally {
    if (other.exitCode === null) await once(other, 'exit');
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
