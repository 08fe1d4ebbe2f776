import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CoreError } from '../../../src/core/errors.ts';
import { formatLegacyDay, formatLegacyListDate, formatLegacyMinute, parseLegacyDay } from '../../../src/doors/legacy/dates.ts';
import { legacyCredit, legacyFailureOf, legacyRow } from '../../../src/doors/legacy/errors.ts';

test('credit.do balances always carry a decimal part, negative ones too', () => {
  assert.deepEqual([100, 212.5, 0, -0, -3, -3.25, 0.000001].map(legacyCredit), ['100.0', '212.5', '0.0', '0.0', '-3.0', '-3.25', '0.000001']);
  for (const t of [100, 212.5, 0, -3, 0.000001].map(legacyCredit)) assert.match(t, /^-?\d+\.\d+$/);
});

test('list rows: fields joined by " | ", a | or a line break inside a field written /', () => {
  assert.equal(legacyRow(['id', 'a | b', 'two\r\nlines', ' x ']), 'id | a / b | two/lines | x');
});

test('codes that depend on the operation: 61 for a message, 41 for an account, 41 for a login taken', () => {
  const notFound = new CoreError('NOT_FOUND', 'no such thing', 'login');
  const conflict = new CoreError('CONFLICT', 'taken', 'newPseudo');
  assert.deepEqual([legacyFailureOf(notFound).code, legacyFailureOf(notFound, 'account').code, legacyFailureOf(notFound, 'newAccount').code], [61, 41, 61]);
  assert.deepEqual([legacyFailureOf(conflict).code, legacyFailureOf(conflict, 'account').code, legacyFailureOf(conflict, 'newAccount').code], [35, 35, 41]);
  const taken = legacyFailureOf(conflict, 'newAccount');
  assert.deepEqual(
    [taken.httpStatus, taken.line, taken.description],
    [409, '41 | Login already taken: newPseudo: taken', 'Login already taken: newPseudo: taken'],
  );
});

test('list and key dates in the organisation’s time zone; dates of birth', () => {
  const winter = Date.UTC(2025, 0, 15, 8, 5, 30); // 09:05:30 in Paris
  assert.equal(formatLegacyListDate(winter, 'Europe/Paris'), '15/01/2025 09:05');
  assert.equal(formatLegacyMinute(winter, 'Europe/Paris'), '15012025-09:05');
  assert.equal(formatLegacyMinute(winter, 'America/New_York'), '15012025-03:05');
  assert.equal(formatLegacyDay(Date.UTC(2025, 6, 31, 23, 30), 'Europe/Paris'), '01082025');
  assert.equal(parseLegacyDay('31121980'), '1980-12-31');
  assert.equal(parseLegacyDay('29022024'), '2024-02-29');
  for (const bad of ['29022023', '00012000', '01132000', '1980-12-31', '0101180', '01011800']) assert.equal(parseLegacyDay(bad), null, bad);
});
