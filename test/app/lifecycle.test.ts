// The node's parts: started in their order, stopped in the reverse one, a failure to stop stopping nothing else.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pino from 'pino';
import { type Part, startParts, stopParts } from '../../src/app/lifecycle.ts';

function recorded(names: string[], failing: { start?: string; stop?: string } = {}): { parts: Part[]; log: string[] } {
  const log: string[] = [];
  const parts = names.map((name) => ({
    name,
    async start() {
      if (failing.start === name) throw new Error(`${name} cannot start`);
      log.push(`start ${name}`);
    },
    stop() {
      if (failing.stop === name) throw new Error(`${name} cannot stop`);
      log.push(`stop ${name}`);
    },
  }));
  return { parts, log };
}

const silent = pino({ level: 'silent' });

describe('the parts of a node', () => {
  test('start in their order and stop in the reverse one; a part may have only one of the two', async () => {
    const { parts, log } = recorded(['database', 'workers', 'doors']);
    parts.splice(1, 0, { name: 'drain', stop: () => void log.push('stop drain') });
    await startParts(parts);
    await stopParts(parts, silent);
    assert.deepEqual(log, ['start database', 'start workers', 'start doors', 'stop doors', 'stop workers', 'stop drain', 'stop database']);
  });

  test('a part that fails to start stops the start there, with its error', async () => {
    const { parts, log } = recorded(['database', 'workers', 'doors'], { start: 'workers' });
    await assert.rejects(startParts(parts), /workers cannot start/);
    assert.deepEqual(log, ['start database']);
  });

  test('a part that fails to stop is logged, the others stop all the same, and the first failure is thrown', async () => {
    const { parts, log } = recorded(['database', 'workers', 'doors'], { stop: 'doors' });
    const logged: unknown[] = [];
    const logger = pino({ level: 'error' }, { write: (line: string) => void logged.push(JSON.parse(line)) });
    await assert.rejects(stopParts(parts, logger), /doors cannot stop/);
    assert.deepEqual(log, ['stop workers', 'stop database']);
    assert.equal(logged.length, 1);
    assert.equal((logged[0] as { part: string }).part, 'doors');
  });
});
