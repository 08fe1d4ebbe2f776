import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { HIGH_LANE, type Lane, LOW_LANE } from '../../src/domain/fair-queue.ts';
import type { Connector, ConnectorRecord, Router } from '../../src/core/ports.ts';
import { ConnectorService, type RecordHandoff } from '../../src/core/routing/service.ts';
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

  test('records due now are written leased to the timers that take them, and handed over once stored; the others wake their lane', async () => {
    // A service of its own on the server's database, handing over to a stand-in for the timers.
    const service = new ConnectorService(server.app.store, async () => undefined, {} as ConstructorParameters<typeof ConnectorService>[2]);
    const taken: Array<{ lane: Lane; keys: string[] }> = [];
    let room = 2;
    const handoff: RecordHandoff = {
      reserve: (lane, now) => (lane === HIGH_LANE && room-- > 0 ? now + 30_000 : null),
      take: (_connector, lane, list) => taken.push({ lane, keys: list.map((r) => r.key) }),
      release: () => assert.fail('nothing to release: the records were stored'),
    };
    service.handRecordsTo(handoff);
    const woken: Lane[] = [];
    service.onRecordsDue((lanes) => woken.push(...lanes));
    const records = service.context('handoff-test', silent, () => undefined).records;
    const now = Date.now();
    await records.put([
      { key: 'otp-1', data: {}, dueAt: now - 1 },
      { key: 'otp-2', data: {}, dueAt: now },
      { key: 'otp-3', data: {}, dueAt: now },
      { key: 'campaign-1', data: {}, dueAt: now, lane: LOW_LANE },
      { key: 'later', data: {}, dueAt: now + 60_000 },
      { key: 'kept', data: {}, dueAt: null },
    ]);
    assert.deepEqual(taken, [{ lane: HIGH_LANE, keys: ['otp-1', 'otp-2'] }]);
    assert.deepEqual([...new Set(woken)].sort(), [HIGH_LANE, LOW_LANE].sort(), 'otp-3 and campaign-1 are left to a claim');
    const stored = await server.app.store.db.selectFrom('connector_records').select(['key', 'lease_until']).where('connector', '=', 'handoff-test').execute();
    const leased = stored
      .filter((r) => r.lease_until !== null)
      .map((r) => r.key)
      .sort();
    assert.deepEqual(leased, ['otp-1', 'otp-2']);
    // No claim takes what was handed over.
    const claimed = [...(await service.claimDue(now + 1, 100, 5_000, HIGH_LANE)).due, ...(await service.claimDue(now + 1, 100, 5_000, LOW_LANE)).due];
    assert.deepEqual(
      claimed
        .filter((d) => d.connector === 'handoff-test')
        .map((d) => d.record.key)
        .sort(),
      ['campaign-1', 'otp-3'],
    );
  });
});

describe('connector timers', () => {
  test('take records handed over while their lane is caught up and has room, and deal with them as with claimed ones', async () => {
    let claimable: ConnectorRecord[] = [];
    const settled: string[] = [];
    const dealt: string[] = [];
    let releaseBacklog = () => {};
    const backlogHeld = new Promise<void>((resolve) => {
      releaseBacklog = resolve;
    });
    const service = {
      async claimDue(_now: number, limit: number, _leaseMs: number, lane: Lane) {
        if (lane !== HIGH_LANE) return { due: [], nextDue: null };
        return { due: claimable.splice(0, limit).map((record) => ({ connector: 'network', record })), nextDue: null };
      },
      async settleDue(_name: string, keys: string[]) {
        settled.push(...keys);
      },
    } as unknown as ConnectorService;
    const network = {
      name: 'network',
      async due(records: ConnectorRecord[]) {
        dealt.push(...records.map((r) => r.key));
        if (records[0]?.key.startsWith('backlog-')) await backlogHeld;
        return [];
      },
    } as unknown as Connector;
    const router = { connector: (name: string) => (name === 'network' ? network : undefined) } as unknown as Router;
    const timers = new ConnectorTimers(service, router, pino({ level: 'silent' }), 5_000);
    assert.equal(timers.reserve(HIGH_LANE, 1_000), null, 'not started');
    // A backlog a full claim long: while it is being dealt with, records written are left to the claims, behind it.
    claimable = Array.from({ length: 200 }, (_, i) => ({ key: `backlog-${i}`, data: {}, dueAt: 0, lane: HIGH_LANE }));
    timers.start();
    try {
      await eventually(async () => (dealt.length === 200 ? true : undefined), 2_000, 'the backlog claimed');
      assert.equal(timers.reserve(HIGH_LANE, 1_000), null, 'behind a full claim');
      releaseBacklog();
      await eventually(async () => (timers.reserve(HIGH_LANE, 1_000) !== null ? true : undefined), 2_000, 'caught up once a claim comes back short');
      timers.release(HIGH_LANE, 1);
      assert.equal(timers.reserve(HIGH_LANE, 1_000), 6_000, 'leased for the timers’ lease');
      timers.take('network', HIGH_LANE, [{ key: 'otp', data: {}, dueAt: 1_000, lane: HIGH_LANE }]);
      await eventually(async () => (settled.includes('otp') ? true : undefined), 2_000, 'the record handed over is dealt with and settled');
      assert.ok(dealt.includes('otp'));
      // Room: at most 400 records handed over and not settled yet, in a lane.
      let reserved = 0;
      while (timers.reserve(HIGH_LANE, 1_000) !== null) reserved++;
      assert.equal(reserved, 400);
      timers.release(HIGH_LANE, reserved);
    } finally {
      releaseBacklog();
      await timers.stop();
    }
    assert.equal(timers.reserve(HIGH_LANE, 1_000), null, 'stopped');
  });

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
        const due = waiting
          .get(lane)!
          .splice(0, limit)
          .map((record) => ({ connector: 'network', record }));
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
