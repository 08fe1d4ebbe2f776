import assert from 'node:assert/strict';
import { test } from 'node:test';
import { WindowGate } from '../../../src/connectors/smpp/window-gate.ts';

test('a window gate lets in at most its size, in arrival order, and a message’s parts together', async () => {
  const gate = new WindowGate(3);
  const order: string[] = [];
  const a = await gate.acquire(2);
  const b = gate.acquire(2).then((r) => (order.push('b'), r));
  const c = gate.acquire(1).then((r) => (order.push('c'), r));
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(order, [], 'c waits behind b though it would fit: no overtaking');
  assert.equal(gate.load, 5);
  a();
  a();
  const releaseB = await b;
  const releaseC = await c;
  assert.deepEqual(order, ['b', 'c']);
  assert.equal(gate.load, 3);
  releaseB();
  releaseC();
  assert.equal(gate.load, 0, 'a release given twice counts once');
  const whole = await gate.acquire(10);
  assert.equal(gate.load, 3, 'more parts than the window take the whole window');
  whole();
});
