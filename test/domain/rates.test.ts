import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkRate, parseRateCsv, type Rate, RateBook, RateError } from '../../src/domain/rates.ts';
import { atLoss, rankedOrder, type RouteRule } from '../../src/domain/routing.ts';

const day = (d: string) => Date.parse(`${d}T00:00:00Z`);
let n = 0;
const rate = (over: Partial<Rate>): Rate => ({
  id: `r${String(n++).padStart(3, '0')}`,
  connectorId: 'c1',
  type: '',
  prefix: '',
  country: '',
  mccMnc: '',
  amount: 1,
  validFrom: day('2020-01-01'),
  validTo: null,
  ...over,
});
const msg = { type: 'SMS', recipient: '33612345678', country: 'FR', mccMnc: '20801' };

test('the most specific rate in force applies: MCC/MNC, then the longest prefix, then country, then type', () => {
  const book = new RateBook([
    rate({ country: 'FR', amount: 40 }),
    rate({ prefix: '336', amount: 35 }),
    rate({ prefix: '3361', amount: 33 }),
    rate({ mccMnc: '20801', amount: 30 }),
    rate({ mccMnc: '20815', amount: 10 }),
    rate({ country: 'DE', amount: 5 }),
  ]);
  const at = day('2026-06-01');
  assert.equal(book.rateFor('c1', msg, at)?.amount, 30);
  assert.equal(book.rateFor('c1', { ...msg, mccMnc: null }, at)?.amount, 33);
  assert.equal(book.rateFor('c1', { ...msg, mccMnc: null, recipient: '33712345678' }, at)?.amount, 40);
  assert.equal(book.rateFor('c1', { ...msg, country: 'IT', mccMnc: null, recipient: '39312345678' }, at), null);
  assert.equal(book.rateFor('c2', msg, at), null, 'another connector’s table');
});

test('a rate is in force from validFrom until validTo excluded; a newer price list wins from its date', () => {
  const book = new RateBook([
    rate({ country: 'FR', amount: 40, validFrom: day('2026-01-01') }),
    rate({ country: 'FR', amount: 45, validFrom: day('2026-07-01') }),
    rate({ country: 'FR', type: 'SMS', amount: 20, validFrom: day('2026-03-01'), validTo: day('2026-04-01') }),
  ]);
  assert.equal(book.rateFor('c1', msg, day('2025-12-31')), null);
  assert.equal(book.rateFor('c1', msg, day('2026-02-01'))?.amount, 40);
  assert.equal(book.rateFor('c1', msg, day('2026-03-15'))?.amount, 20, 'a promotion for SMS only, more specific');
  assert.equal(book.rateFor('c1', msg, day('2026-04-01'))?.amount, 40, 'validTo is the first instant it is over');
  assert.equal(book.rateFor('c1', { ...msg, type: 'VOICE' }, day('2026-03-15'))?.amount, 40);
  assert.equal(book.rateFor('c1', msg, day('2026-07-01'))?.amount, 45);
});

test('checkRate reads operators’ fields and refuses what is not a rate', () => {
  const now = day('2026-05-05');
  assert.deepEqual(checkRate({ price: '0,0312', mcc: '208', mnc: '01', currency: 'eur' }, 'r', now), {
    type: '',
    prefix: '',
    country: '',
    mccMnc: '20801',
    amount: 31_200,
    validFrom: now,
    validTo: null,
  });
  assert.equal(checkRate({ price: 0.05, prefix: '+4479', type: 'sms', valid_from: '2026-06-01' }, 'r', now).prefix, '4479');
  const refused = (input: Record<string, unknown>, field: RegExp) =>
    assert.throws(
      () => checkRate(input, 'r', now),
      (e: unknown) => e instanceof RateError && field.test(e.field),
    );
  refused({}, /r\.price/);
  refused({ price: -1 }, /r\.price/);
  refused({ price: 101 }, /r\.price/);
  refused({ price: 1, currency: 'USD' }, /currency/);
  refused({ price: 1, type: 'FAX' }, /type/);
  refused({ price: 1, prefix: '33a' }, /prefix/);
  refused({ price: 1, country: 'France' }, /country/);
  refused({ price: 1, mcc: '208' }, /mnc/);
  refused({ price: 1, mnc: '01' }, /mcc/);
  refused({ price: 1, mccMnc: '2080' }, /mccMnc/);
  refused({ price: 1, validFrom: 'tomorrow' }, /validFrom/);
  refused({ price: 1, validFrom: '2026-02-01', validTo: '2026-02-01' }, /validTo/);
});

test('parseRateCsv: a header naming the columns, then one rate a line; errors name the line', () => {
  const rates = parseRateCsv('country,mcc,mnc,prefix,price,currency,valid_from,notes\nFR,208,01,,0.03,EUR,2026-01-01,main\nGB,,,44,0.02,EUR,,\n', 0, 10);
  assert.deepEqual(
    rates.map((r) => [r.country, r.mccMnc, r.prefix, r.amount, r.validFrom]),
    [
      ['FR', '20801', '', 30_000, day('2026-01-01')],
      ['GB', '', '44', 20_000, 0],
    ],
  );
  assert.throws(() => parseRateCsv('country,price\nFR,x\n', 0, 10), /line 2\.price/);
  assert.throws(() => parseRateCsv('country,price\n', 0, 10), /no rate/);
  assert.throws(() => parseRateCsv('country,price\nFR,1,extra\n', 0, 10), /line 2.*3 fields/);
  assert.throws(() => parseRateCsv('country,price\nFR,1\nDE,1\n', 0, 1), /line 3.*at most 1/);
  assert.throws(() => parseRateCsv('country,price\n"FR,1\n', 0, 10), /not closed/);
});

test('rankedOrder: cheapest first, unknown costs last, ties by weight, failover after; atLoss', () => {
  const route: RouteRule = {
    id: 'r',
    name: 'r',
    priority: 1,
    match: {},
    connectors: [
      { connectorId: 'a', weight: 1 },
      { connectorId: 'b', weight: 5 },
      { connectorId: 'c', weight: 2 },
      { connectorId: 'd', weight: 1 },
      { connectorId: 'off', weight: 0 },
    ],
    failover: ['f', 'a'],
  };
  const cost: Record<string, number | null> = { a: 30, b: 40, c: 30, d: null, off: 1, f: 1 };
  assert.deepEqual(
    rankedOrder(
      route,
      () => true,
      (id) => cost[id] ?? null,
      true,
    ),
    ['c', 'a', 'b', 'd', 'f'],
  );
  assert.deepEqual(
    rankedOrder(
      route,
      (id) => id !== 'c',
      (id) => cost[id] ?? null,
      true,
    ),
    ['a', 'b', 'd', 'f'],
  );
  assert.deepEqual(
    rankedOrder(
      route,
      () => true,
      (id) => cost[id] ?? null,
      false,
    ),
    ['b', 'c', 'a', 'd', 'f'],
    'the higher first (a delivery rate)',
  );
  assert.equal(atLoss(30, 2, 59), true);
  assert.equal(atLoss(30, 2, 60), false);
  assert.equal(atLoss(null, 2, 0), false);
});
