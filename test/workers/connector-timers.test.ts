import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { HIGH_LANE, type Lane, LOW_LANE } from '../../src/core/domain/fair-queue.ts';
import type { Connector, ConnectorRecord, Router } from '../../src/core/ports.ts';
import type { ConnectorService } from '../../src/core/routing/service.ts';
import { ConnectorTimers } from '../../src/workers/connector-timers.ts';
import { forEachDialect, startTestServer, type TestServer } from '../support/server.ts';
import { eventually } from '../support/wait.ts';

const silent = { debug() {}, info() {}, warn() {}, error() {} };

forEachDialect('connector records in lanes', (dialect) => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer(dialect);
  });
  after(() => server.stop());

  test('due records are claimed lane by lane, each lane oldest first, with its own next due time', async () => {
    const connectors = server.app.services.connectors;
    const records = connectors.context('lanes-test', silent, () => undefined).records;
    // Due a minute from now: the server's own timers leave them alone; the claims below look from past that.
    const t = Date.now() + 60_000;
    await records.put([
      { key: 'low-2', data: {}, dueAt: t + 2, lane: LOW_LANE },
      { key: 'low-1', data: {}, dueAt: t + 1, lane: LOW_LANE },
      { key: 'high-late', data: {}, dueAt: t + 3, lane: HIGH_LANE },
      { key: 'timer', data: {}, dueAt: t + 50 },
      { key: 'low-later', data: {}, dueAt: t + 10_000, lane: LOW_LANE },
    ]);
    const mine = (due: Array<{ connector: string; record: ConnectorRecord }>) => due.filter((d) => d.connector === 'lanes-test').map((d) => d.record.key);

    const high = await connectors.claimDue(t + 100, 10, 5_000, HIGH_LANE);
    // A record written without a lane (a connector's own timer) is in the high lane.
    assert.deepEqual(mine(high.due), ['high-late', 'timer']);
    const low = await connectors.claimDue(t + 100, 10, 5_000, LOW_LANE);
    assert.deepEqual(mine(low.due), ['low-1', 'low-2']);
    assert.equal(low.nextDue, t + 10_000);
    assert.deepEqual(
      (await connectors.claimDue(t + 100, 10, 5_000, HIGH_LANE)).due.filter((d) => d.connector === 'lanes-test'),
      [],
      'claimed records are leased',
    );
    // A record read back keeps its lane.
    assert.equal((await records.get(['low-later'])).get('low-later')?.lane, LOW_LANE);
  });
});

describe('connector timers', () => {
  test('a record of the high lane is handed over while a pass through the low lane is still at work', async () => {
    const waiting = new Map<Lane, ConnectorRecord[]>([
      [HIGH_LANE, []],
      [LOW_LANE, Array.from({ length: 3 }, (_, i) => ({ key: `campaign-${i}`, data: {}, dueAt: 0, lane: LOW_LANE }))],
    ]);
    const handed: string[] = [];
    let releaseLow = () => {};
    const lowBlocked = new Promise<void>((resolve) => {
      releaseLow = resolve;
    });
    const service = {
      async claimDue(_now: number, limit: number, _leaseMs: number, lane: Lane) {
        const due = waiting.get(lane)!.splice(0, limit).map((record) => ({ connector: 'network', record }));
        return { due, nextDue: null };
      },
      async settleDue() {},
    } as unknown as ConnectorService;
    const network = {
      name: 'network',
      async due(records: ConnectorRecord[]) {
        handed.push(...records.map((r) => r.key));
        // The low lane's pass takes its time (a campaign's receipts being applied).
        if (records[0]?.lane === LOW_LANE) await lowBlocked;
        return [];
      },
    } as unknown as Connector;
    const router = { connector: (name: string) => (name === 'network' ? network : undefined) } as unknown as Router;
    const timers = new ConnectorTimers(service, router, pino({ level: 'silent' }), 5_000);
    timers.start();
    try {
      await eventually(async () => (handed.length === 3 ? true : undefined), 2_000, 'the low lane handed over');
      waiting.get(HIGH_LANE)!.push({ key: 'otp', data: {}, dueAt: 0, lane: HIGH_LANE });
      timers.wake([HIGH_LANE]);
      await eventually(async () => (handed.includes('otp') ? true : undefined), 2_000, 'the OTP’s record handed over');
    } finally {
      releaseLow();
      await timers.stop();
    }
  });
});
