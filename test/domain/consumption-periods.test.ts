import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  addDays,
  changesSettledDay,
  consumptionId,
  coveredDays,
  defaultConsumptionWindow,
  lastSettledDay,
  monthStartPlus,
  periodEnd,
  periodStart,
} from '../../src/domain/consumption-periods.ts';

test('periods: start and end of days and calendar months, leap years included', () => {
  assert.equal(periodStart('2024-02-17', 'DAY'), '2024-02-17');
  assert.equal(periodStart('2024-02-17', 'MONTH'), '2024-02-01');
  assert.equal(periodEnd('2024-02-01', 'MONTH'), '2024-02-29');
  assert.equal(periodEnd('2023-02-01', 'MONTH'), '2023-02-28');
  assert.equal(periodEnd('2024-12-01', 'MONTH'), '2024-12-31');
  assert.equal(periodEnd('2024-04-01', 'MONTH'), '2024-04-30');
  assert.equal(periodEnd('2024-04-09', 'DAY'), '2024-04-09');
  assert.equal(addDays('2024-12-31', 1), '2025-01-01');
  assert.equal(addDays('2024-03-01', -1), '2024-02-29');
  assert.equal(monthStartPlus('2024-01-31', -2), '2023-11-01');
  assert.equal(monthStartPlus('2024-11-30', 2), '2025-01-01');
});

test('coveredDays widens the window to whole periods', () => {
  assert.deepEqual(coveredDays('2024-01-15', '2024-03-02', 'MONTH'), { from: '2024-01-01', to: '2024-03-31' });
  assert.deepEqual(coveredDays('2024-01-15', '2024-03-02', 'DAY'), { from: '2024-01-15', to: '2024-03-02' });
});

test('the default window is the current month and the two before it', () => {
  assert.deepEqual(defaultConsumptionWindow(Date.parse('2024-03-10T23:59:00Z')), { startDate: '2024-01-01', endDate: '2024-03-10' });
  assert.deepEqual(defaultConsumptionWindow(Date.parse('2024-01-01T00:00:00Z')), { startDate: '2023-11-01', endDate: '2024-01-01' });
});

test('consumptionId: a version-8 UUID, the same for the same key, different for any other', () => {
  const key = { organisationId: 'o1', channelId: 'c1', type: 'SMS', periodType: 'MONTH' as const, startDate: '2024-05-01' };
  const id = consumptionId(key);
  assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.equal(consumptionId({ ...key }), id);
  const others = [
    { ...key, organisationId: 'o2' },
    { ...key, channelId: 'c2' },
    { ...key, type: 'LOOKUP' },
    { ...key, periodType: 'DAY' as const },
    { ...key, startDate: '2024-06-01' },
  ].map(consumptionId);
  assert.equal(new Set([id, ...others]).size, 6);
});

test('settled days: kept from three days old; writes announced from two days old, a day of margin', () => {
  const now = Date.parse('2026-03-01T00:30:00Z');
  assert.equal(lastSettledDay(now), '2026-02-26');
  assert.equal(changesSettledDay('2026-02-26', now), true);
  assert.equal(changesSettledDay('2026-02-27', now), true, 'a day past what readers keep is announced too');
  assert.equal(changesSettledDay('2026-02-28', now), false);
  assert.equal(changesSettledDay('2026-03-01', now), false);
  assert.equal(lastSettledDay(Date.parse('2026-03-01T23:59:59Z')), '2026-02-26');
});
