import assert from 'node:assert/strict';
import { test } from 'node:test';
import { candidateOrder, findRoute, orderRoutes, type RoutableMessage, type RouteRule, routeMatches } from '../../src/domain/routing.ts';

const message = (over: Partial<RoutableMessage> = {}): RoutableMessage => ({
  type: 'SMS',
  recipient: '447700900123',
  channelId: 'c1',
  organisationId: 'o1',
  flow: 'TRANSACTIONAL',
  country: 'GB',
  mccMnc: '23410',
  ...over,
});

const rule = (
  id: string,
  priority: number,
  match: RouteRule['match'],
  connectors: RouteRule['connectors'] = [{ connectorId: id, weight: 1 }],
  failover: string[] = [],
): RouteRule => ({
  id,
  name: id,
  priority,
  match,
  connectors,
  failover,
});

test('a route takes a message when every field it names matches', () => {
  assert.ok(routeMatches({}, message()));
  assert.ok(
    routeMatches({ prefix: '44', country: 'GB', mccMnc: '23410', type: 'SMS', flow: 'TRANSACTIONAL', organisationId: 'o1', channelId: 'c1' }, message()),
  );
  for (const m of [
    { prefix: '33' },
    { country: 'FR' },
    { mccMnc: '20801' },
    { type: 'VOICE' },
    { flow: 'OTP' },
    { organisationId: 'o2' },
    { channelId: 'c2' },
  ]) {
    assert.equal(routeMatches(m, message()), false, JSON.stringify(m));
  }
  assert.equal(routeMatches({ country: 'GB' }, message({ country: null })), false, 'an unknown country matches no country rule');
});

test('routes are tried by priority, then the longest prefix, then the most specific match', () => {
  const ordered = orderRoutes([
    rule('catch-all', 100, {}),
    rule('uk', 10, { prefix: '44' }),
    rule('uk-mobile', 10, { prefix: '447' }),
    rule('uk-otp', 10, { prefix: '447', flow: 'OTP' }),
    rule('voice', 5, { type: 'VOICE' }),
  ]);
  assert.deepEqual(
    ordered.map((r) => r.id),
    ['voice', 'uk-otp', 'uk-mobile', 'uk', 'catch-all'],
  );
  assert.equal(findRoute(ordered, message())?.id, 'uk-mobile');
  assert.equal(findRoute(ordered, message({ flow: 'OTP' }))?.id, 'uk-otp');
  assert.equal(findRoute(ordered, message({ type: 'VOICE' }))?.id, 'voice');
  assert.equal(findRoute(ordered, message({ recipient: '33612345678' }))?.id, 'catch-all');
  assert.equal(findRoute(orderRoutes([rule('uk', 1, { prefix: '44' })]), message({ recipient: '33612345678' })), null);
});

test('candidates: one drawn by weight, then the others, then the failover list; connectors down are left out', () => {
  const r = rule(
    'r',
    1,
    {},
    [
      { connectorId: 'a', weight: 3 },
      { connectorId: 'b', weight: 1 },
      { connectorId: 'off', weight: 0 },
    ],
    ['f1', 'a', 'f2'],
  );
  const all = () => true;
  assert.deepEqual(candidateOrder(r, all, 0), ['a', 'b', 'f1', 'f2']);
  assert.deepEqual(candidateOrder(r, all, 0.74), ['a', 'b', 'f1', 'f2']);
  assert.deepEqual(candidateOrder(r, all, 0.76), ['b', 'a', 'f1', 'f2']);
  assert.deepEqual(
    candidateOrder(r, (id) => id !== 'a', 0),
    ['b', 'f1', 'f2'],
  );
  assert.deepEqual(
    candidateOrder(r, (id) => id.startsWith('f'), 0.5),
    ['f1', 'f2'],
  );
  assert.deepEqual(
    candidateOrder(r, () => false, 0.5),
    [],
    'all down: nothing to try, the message waits',
  );
});

test('weights split traffic in proportion (10,000 draws within 2 %)', () => {
  const r = rule('r', 1, {}, [
    { connectorId: 'a', weight: 1 },
    { connectorId: 'b', weight: 3 },
  ]);
  let seed = 7;
  const random = () => ((seed = (seed * 16807) % 2147483647) - 1) / 2147483646;
  let b = 0;
  for (let i = 0; i < 10_000; i++) if (candidateOrder(r, () => true, random())[0] === 'b') b++;
  assert.ok(Math.abs(b / 10_000 - 0.75) < 0.02, `b took ${b} of 10,000`);
});
