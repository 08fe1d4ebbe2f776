import assert from 'node:assert/strict';
import { test } from 'node:test';
import { placeholders, tuples } from '../../src/store/batch-sql.ts';

test('placeholders: bare on SQLite, numbered from where the statement is on PostgreSQL', () => {
  assert.equal(placeholders(false, 0), '');
  assert.equal(placeholders(false, 3), '?, ?, ?');
  assert.equal(placeholders(true, 3), '$1, $2, $3');
  assert.equal(placeholders(true, 2, 5), '$5, $6');
  assert.equal(tuples(false, 2, 3), '(?, ?, ?), (?, ?, ?)');
  assert.equal(tuples(true, 2, 3), '($1, $2, $3), ($4, $5, $6)');
  assert.equal(tuples(true, 2, 2, 4), '($4, $5), ($6, $7)');
});
