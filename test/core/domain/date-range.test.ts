import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseDateBound } from '../../../src/core/domain/date-range.ts';

test('a day is a UTC day: its first instant as a start, its last as an end', () => {
  assert.equal(parseDateBound('2024-05-01', 'start'), Date.parse('2024-05-01T00:00:00.000Z'));
  assert.equal(parseDateBound('2024-05-01', 'end'), Date.parse('2024-05-01T23:59:59.999Z'));
  assert.equal(parseDateBound('2024-02-30', 'start'), null);
});

test('date-times: with an offset as written, without one in UTC', () => {
  assert.equal(parseDateBound('2024-05-01T10:00:00', 'start'), Date.parse('2024-05-01T10:00:00Z'));
  assert.equal(parseDateBound('2024-05-01T10:00', 'end'), Date.parse('2024-05-01T10:00:00Z'));
  assert.equal(parseDateBound('2024-05-01T12:00:00+02:00', 'start'), Date.parse('2024-05-01T10:00:00Z'));
  assert.equal(parseDateBound('2024-05-01T12:00:00+0200', 'start'), Date.parse('2024-05-01T10:00:00Z'));
  assert.equal(parseDateBound('2024-05-01 10:00:00.123456Z', 'start'), Date.parse('2024-05-01T10:00:00.123Z'));
  assert.equal(parseDateBound('2024-05-01t10:00:00z', 'start'), Date.parse('2024-05-01T10:00:00Z'));
});

test('anything else is refused', () => {
  for (const bad of ['', 'yesterday', '2024-05-01T25:00:00', '2024-05-01T10:60', '2024-05-32T10:00', '1714557600000', '2024/05/01', '2024-05-01T10:00:00+2']) {
    assert.equal(parseDateBound(bad, 'start'), null, bad);
  }
});
