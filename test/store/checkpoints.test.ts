import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { sql } from 'kysely';
import { openStore } from '../../src/store/db.ts';
import { eventually } from '../support/wait.ts';

describe('SQLite checkpoints', () => {
  test('the write-ahead log is copied into the database beside the writer, long before a commit would copy it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tern-checkpoints-'));
    const file = join(dir, 'tern.db');
    const store = await openStore(`sqlite:${file}`, 'checkpoints-test');
    try {
      await sql`create table filler (id integer primary key, text text not null)`.execute(store.db);
      const before = statSync(file).size;
      // About 4 MiB: a quarter of what makes a commit checkpoint on its own.
      const text = 'x'.repeat(4_000);
      for (let i = 0; i < 1_000; i += 100) {
        await store.db.transaction().execute(async (trx) => {
          for (let j = i; j < i + 100; j++) await sql`insert into filler (id, text) values (${j}, ${text})`.execute(trx);
        });
      }
      // Only a checkpoint writes pages into the database file itself.
      const grown = await eventually(() => statSync(file).size > before + 3_000_000 && statSync(file).size, 5_000, 'the log copied into the database');
      assert.ok(grown > before);
      const rows = await sql<{ n: number }>`select count(*) as n from filler`.execute(store.db);
      assert.equal(Number(rows.rows[0]!.n), 1_000);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
