import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Simulator } from '../../src/connectors/simulator/connector.ts';
import type { Connector } from '../../src/core/ports.ts';
import { connectorHarness, HarnessContext, outbound } from './harness.ts';

const settings = { submitLatencyMs: 0, receiptLatencyMs: 0, readDelayMs: 0, tps: 0, failedDeliveryPercent: 0 };

async function settle(ctx: HarnessContext, connector: Connector): Promise<void> {
  // Receipts, then read reports, fall due at once with zero latencies.
  while ((await ctx.runDue(connector, Date.now() + 1)) > 0);
}

connectorHarness('SIMULATOR', {
  idempotentSubmit: true,
  async create(name) {
    const connector = new Simulator(name, settings);
    return {
      connector,
      operator: {
        deliverable: ['33612345678', '447700900123', '14155550100'],
        settle,
        async sendMo(_ctx, c, mo) {
          // The simulated network hands MO over through its own route, as raw JSON.
          const route = c.routes!().find((r) => r.path === '/mo')!;
          const raw = JSON.stringify(mo);
          const answer = await route.handle({
            method: 'POST',
            path: '/mo',
            query: {},
            headers: { 'content-type': 'application/json' },
            body: JSON.parse(raw),
            rawBody: raw,
          });
          assert.equal(answer.status, 202);
        },
        async close() {},
      },
    };
  },
});

describe('simulator rules', () => {
  const start = async () => {
    const sim = new Simulator('simulator', settings);
    const ctx = new HarnessContext('simulator');
    await sim.start(ctx);
    return { sim, ctx };
  };

  test('test numbers: UNDELIVERED, rejected, no receipt, one temporary error then DELIVERED', async () => {
    const { sim, ctx } = await start();
    const [undelivered, rejected, silent, flaky] = ['33612340001', '33612340002', '33612340003', '33612340004'].map((n) => outbound(n));
    const results = await sim.submit([undelivered!, rejected!, silent!, flaky!]);
    assert.deepEqual(
      results.map((r) => (r.ok ? 'ok' : `${r.temporary ? 'temporary' : 'permanent'} ${r.code}`)),
      ['ok', 'permanent REJECTED', 'ok', 'temporary THROTTLED'],
    );
    assert.ok((await sim.submit([flaky!]))[0]!.ok, 'the retry is taken');
    await settle(ctx, sim);
    const statuses = Object.fromEntries(
      ctx.events.filter((e) => e.kind === 'receipt').map((e) => [e.kind === 'receipt' ? e.messageId : '', e.kind === 'receipt' ? e.status : '']),
    );
    assert.deepEqual(statuses, { [undelivered!.id]: 'UNDELIVERED', [flaky!.id]: 'DELIVERED' });
  });

  test('RCS: DELIVERED then READ, not capable ends UNDELIVERABLE, revoked messages are never reported', async () => {
    const { sim, ctx } = await start();
    const read = outbound('33612345678', { type: 'RCS' });
    const incapable = outbound('33612345679', { type: 'RCS' });
    const revoked = outbound('33612340007', { type: 'RCS' });
    const slow = new Simulator('slow', { ...settings, receiptLatencyMs: 60_000 });
    const slowCtx = new HarnessContext('slow');
    await slow.start(slowCtx);
    const pending = outbound('33612345678', { type: 'RCS' });
    await sim.submit([read, incapable, revoked]);
    await slow.submit([pending]);
    await slow.revoke([pending.id]);
    await settle(ctx, sim);
    assert.equal(await slowCtx.runDue(slow, Date.now() + 120_000), 0, 'nothing owed after a revocation');
    const of = (id: string) => ctx.events.filter((e) => e.kind === 'receipt' && e.messageId === id).map((e) => (e.kind === 'receipt' ? e.status : ''));
    assert.deepEqual(of(read.id), ['DELIVERED', 'READ']);
    assert.deepEqual(of(incapable.id), ['UNDELIVERABLE']);
    assert.deepEqual(of(revoked.id), [], 'an offline handset never reports');
    assert.deepEqual(await sim.rcsCapability('33612345679'), { capable: false, features: [] });
  });

  test('voice: each placement reports its own outcome (busy, no answer, invalid, answered)', async () => {
    const { sim, ctx } = await start();
    const calls = ['33612340001', '33612340002', '33612340003', '33612345678'].map((n) => outbound(n, { type: 'VOICE' }));
    await sim.submit(calls);
    await sim.submit([{ ...calls[0]!, attempt: 2 }]);
    await settle(ctx, sim);
    const reports = ctx.events.flatMap((e) => (e.kind === 'receipt' ? [[e.messageId, e.status, e.detail ?? null]] : []));
    assert.deepEqual(
      reports.filter((r) => r[0] === calls[0]!.id),
      [
        [calls[0]!.id, 'UNDELIVERED', 'BUSY'],
        [calls[0]!.id, 'UNDELIVERED', 'BUSY'],
      ],
    );
    assert.deepEqual(
      reports.find((r) => r[0] === calls[1]!.id),
      [calls[1]!.id, 'UNDELIVERED', 'NO_ANSWER'],
    );
    assert.deepEqual(
      reports.find((r) => r[0] === calls[2]!.id),
      [calls[2]!.id, 'UNDELIVERABLE', 'INVALID_PHONE_NUMBER'],
    );
    assert.deepEqual(
      reports.find((r) => r[0] === calls[3]!.id),
      [calls[3]!.id, 'DELIVERED', null],
    );
  });
});
