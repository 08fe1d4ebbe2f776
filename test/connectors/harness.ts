/**
 * The shared harness every connector runs: the connector is driven as the core drives it (start with a context,
 * submit batches, hand it its due records), its operator side is driven with raw payloads (HTTP requests to the
 * connector's own routes, PDUs from a test SMSC…), and what comes out is checked against the connector contract:
 * one result per message, idempotent submits, receipts and inbound messages named with the connector and matched
 * to what was submitted, routes that answer bad input with a 4xx and never throw.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type {
  CarrierEvent,
  Connector,
  ConnectorContext,
  ConnectorHttpResponse,
  ConnectorRecord,
  ConnectorState,
  OutboundMessage,
  ReceiptEvent,
} from '../../src/core/ports.ts';
import { HIGH_LANE } from '../../src/domain/fair-queue.ts';
import { lookupNumber } from '../../src/core/lookup/enrich.ts';
import { type LiveStatus, LookupUnavailableError } from '../../src/core/lookup/number-status.ts';

/** A context as the core gives it, kept in memory: records with due times, events and health as they come. */
export class HarnessContext implements ConnectorContext {
  readonly events: CarrierEvent[] = [];
  readonly states: ConnectorState[] = [];
  readonly store = new Map<string, ConnectorRecord>();
  readonly logger = { debug() {}, info() {}, warn() {}, error() {} };

  private window = { start: 0, used: 0 };

  constructor(
    readonly name: string,
    /** Where the connector's routes answer, when its operator calls them (HTTP upstreams). */
    private readonly url = `http://127.0.0.1/connectors/${name}`,
  ) {}

  /** One node: the whole rate is this node's. */
  async throttle(units: number, perSecond: number): Promise<{ ok: true } | { ok: false; retryAt: number }> {
    const now = Date.now();
    const start = now - (now % 1000);
    if (this.window.start !== start) this.window = { start, used: 0 };
    if (perSecond > 0 && this.window.used + units > perSecond) return { ok: false, retryAt: start + 1000 };
    this.window.used += units;
    return { ok: true };
  }

  /** One node: every bind is this node's. */
  async slots(total: number): Promise<number[]> {
    return Array.from({ length: total }, (_, i) => i);
  }

  publicUrl(): string {
    return this.url;
  }

  async emit(events: CarrierEvent[]): Promise<void> {
    this.events.push(...events);
  }

  health(state: ConnectorState): void {
    this.states.push(state);
  }

  readonly records = {
    get: async (keys: string[]) => new Map(keys.flatMap((k) => (this.store.has(k) ? [[k, structuredClone(this.store.get(k)!)] as const] : []))),
    put: async (records: ConnectorRecord[]) => {
      for (const r of records) this.store.set(r.key, structuredClone(r));
    },
    list: async (prefix: string, limit: number) =>
      [...this.store.values()]
        .filter((r) => r.key.startsWith(prefix))
        .sort((a, b) => (a.key < b.key ? 1 : a.key > b.key ? -1 : 0))
        .slice(0, limit)
        .map((r) => structuredClone(r)),
  };

  /** Hands the connector its records due by `now`, as the connector timers do, and keeps what it returns. */
  async runDue(connector: Connector, now = Date.now()): Promise<number> {
    const due = [...this.store.values()].filter((r) => r.dueAt !== null && r.dueAt <= now);
    if (due.length === 0 || !connector.due) return 0;
    for (const r of due) this.store.set(r.key, { ...r, dueAt: null });
    for (const r of await connector.due(structuredClone(due), now)) this.store.set(r.key, structuredClone(r));
    return due.length;
  }
}

/** The operator's side of a connector under test. */
export interface OperatorSide {
  /** Lets the operator report on what it took (time passes, receipts come back); resolves when it has. */
  settle(ctx: HarnessContext, connector: Connector): Promise<void>;
  /** A person's SMS sent to `to` through this operator, as the operator hands it over (raw payload); absent for a network that carries none (voice). */
  sendMo?(ctx: HarnessContext, connector: Connector, mo: { from: string; to: string; text: string }): Promise<void>;
  /** Numbers the operator accepts and delivers. */
  deliverable: string[];
  close(): Promise<void>;
}

/** The provider side of a connector that only looks numbers up (it carries no messages). */
export interface LookupSide {
  /** Numbers the provider knows, with what the connector must answer about each. */
  known: Array<{ msisdn: string; expect: Partial<LiveStatus> }>;
  /** A number in a valid range that the provider knows no subscriber for. */
  unknown: string;
  /** Makes the provider fail (an HTTP 500), or answer again. */
  fail(failing: boolean): void;
}

export interface HarnessSubject {
  /** A connector that only looks numbers up: the message tests are replaced by the lookup ones. */
  lookup?: LookupSide;
  /** Builds the connector and its operator (a test SMSC, an HTTP server, a simulated network). */
  create(name: string): Promise<{ connector: Connector; operator: OperatorSide; publicUrl?: string }>;
  /** Whether submitting the same message and attempt again is recognised (no second delivery). */
  idempotentSubmit: boolean;
  /** What the messages submitted are like, when not SMS (a voice connector takes VOICE messages). */
  template?: Partial<OutboundMessage>;
}

export function outbound(recipient: string, over: Partial<OutboundMessage> = {}): OutboundMessage {
  return {
    id: crypto.randomUUID(),
    type: 'SMS',
    channelId: 'channel',
    organisationId: 'organisation',
    recipient,
    sender: 'Tern',
    body: { text: 'Hello from the harness' },
    validityUntil: Date.now() + 60_000,
    registeredDelivery: 1,
    attempt: 1,
    lane: HIGH_LANE,
    ...over,
  };
}

async function until(check: () => boolean, what: string, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export function connectorHarness(kind: string, subject: HarnessSubject): void {
  describe(`connector harness: ${kind}`, () => {
    let connector: Connector;
    let operator: OperatorSide;
    let ctx: HarnessContext;
    const name = `harness-${kind.toLowerCase()}`;

    before(async () => {
      const made = await subject.create(name);
      ({ connector, operator } = made);
      ctx = new HarnessContext(name, made.publicUrl);
      await connector.start(ctx);
    });
    after(async () => {
      await connector.stop();
      await operator.close();
    });

    test('reports its health once started, and UP once it can take messages', async () => {
      await until(() => ctx.states.includes('UP'), 'state UP');
      assert.equal(connector.name, name);
      assert.equal(connector.kind, kind);
    });

    test(
      'answers one result per message, in order, each an upstream id or a typed error',
      { skip: subject.lookup ? 'a lookup connector carries no messages' : false },
      async () => {
        const batch = operator.deliverable.slice(0, 3).map((n) => outbound(n, subject.template));
        const results = await connector.submit(batch);
        assert.equal(results.length, batch.length);
        for (const r of results) {
          if (r.ok) assert.ok(typeof r.upstreamId === 'string' && r.upstreamId.length > 0);
          else assert.ok(typeof r.temporary === 'boolean' && typeof r.code === 'string' && r.code.length > 0);
        }
        assert.ok(
          results.every((r) => r.ok),
          JSON.stringify(results),
        );
        assert.equal(new Set(results.map((r) => (r.ok ? r.upstreamId : ''))).size, batch.length, 'one upstream id per message');
      },
    );

    test(
      'receipts come back named with the connector and matched to what was submitted',
      { skip: subject.lookup ? 'a lookup connector carries no messages' : false },
      async () => {
        const batch = operator.deliverable.slice(0, 2).map((n) => outbound(n, subject.template));
        const results = await connector.submit(batch);
        const upstream = new Map(batch.map((m, i) => [m.id, (results[i] as { upstreamId: string }).upstreamId]));
        await operator.settle(ctx, connector);
        for (const m of batch) {
          const receipt = ctx.events.find(
            (e): e is ReceiptEvent => e.kind === 'receipt' && (e.messageId === m.id || e.upstreamId === upstream.get(m.id)) && e.status === 'DELIVERED',
          );
          assert.ok(receipt, `a DELIVERED receipt for ${m.recipient}`);
          assert.equal(receipt.connector, name);
          assert.ok(typeof receipt.at === 'number');
          // A connector that says its receipts name the message is never looked for by its upstream id alone.
          if (connector.receiptsNameMessage) assert.equal(receipt.messageId, m.id, 'receiptsNameMessage: the receipt names the message');
        }
      },
    );

    test(
      'a message submitted again with the same attempt is recognised, not delivered twice',
      {
        skip: subject.lookup
          ? 'a lookup connector carries no messages'
          : subject.idempotentSubmit
            ? false
            : 'this connector does not recognise a placement submitted again',
      },
      async () => {
        const m = outbound(operator.deliverable[0]!, subject.template);
        const [first] = await connector.submit([m]);
        const [again] = await connector.submit([m]);
        assert.ok(first?.ok && again?.ok);
        assert.equal(again.upstreamId, first.upstreamId);
        await operator.settle(ctx, connector);
        const receipts = ctx.events.filter(
          (e) => e.kind === 'receipt' && (e.messageId === m.id || e.upstreamId === first.upstreamId) && e.status === 'DELIVERED',
        );
        assert.equal(receipts.length, 1);
      },
    );

    test(
      'a new attempt of the same message is a new placement',
      {
        skip: subject.lookup
          ? 'a lookup connector carries no messages'
          : subject.idempotentSubmit
            ? false
            : 'this connector does not recognise a placement submitted again',
      },
      async () => {
        const m = outbound(operator.deliverable[0]!, subject.template);
        const [first] = await connector.submit([m]);
        const [second] = await connector.submit([{ ...m, attempt: 2 }]);
        assert.ok(first?.ok && second?.ok);
        assert.notEqual(second.upstreamId, first.upstreamId);
      },
    );

    test(
      'an inbound message from the operator comes out as an MO event',
      { skip: subject.lookup ? 'a lookup connector carries no messages' : false },
      async (t) => {
        if (!operator.sendMo) return t.skip('this network carries no inbound messages');
        const before = ctx.events.length;
        await operator.sendMo(ctx, connector, { from: '33612345678', to: '36111', text: 'STOP' });
        await until(() => ctx.events.slice(before).some((e) => e.kind === 'mo'), 'the MO event');
        const mo = ctx.events.slice(before).find((e) => e.kind === 'mo')!;
        assert.equal(mo.kind, 'mo');
        if (mo.kind !== 'mo') return;
        assert.equal(mo.connector, name);
        assert.equal(mo.from, '33612345678');
        assert.equal(mo.to, '36111');
        assert.equal(mo.body.text, 'STOP');
      },
    );

    test('a lookup connector refuses messages, one permanent error each', { skip: subject.lookup ? false : 'not a lookup connector' }, async () => {
      const batch = ['33612345678', '447911123456'].map((n) => outbound(n, subject.template));
      const results = await connector.submit(batch);
      assert.equal(results.length, batch.length);
      for (const r of results) assert.ok(!r.ok && !r.temporary && r.code.length > 0, JSON.stringify(r));
    });

    test(
      'a lookup connector answers the live fields of the numbers its provider knows',
      { skip: subject.lookup ? false : 'not a lookup connector' },
      async () => {
        assert.equal(typeof connector.numberStatus, 'function');
        for (const { msisdn, expect } of subject.lookup!.known) {
          const status = await connector.numberStatus!(await lookupNumber(msisdn));
          for (const [field, value] of Object.entries(expect)) assert.deepEqual(status[field as keyof LiveStatus], value, `${msisdn}: ${field}`);
          assert.equal(status.offline, undefined, `${msisdn}: a live answer`);
        }
      },
    );

    test('a lookup connector answers a number with no subscriber as not valid', { skip: subject.lookup ? false : 'not a lookup connector' }, async () => {
      const status = await connector.numberStatus!(await lookupNumber(subject.lookup!.unknown));
      assert.equal(status.valid, false);
      assert.equal(status.reachable, false);
      assert.equal(status.currentNetwork, null);
    });

    test('a lookup connector whose provider fails says so, with a reason', { skip: subject.lookup ? false : 'not a lookup connector' }, async () => {
      subject.lookup!.fail(true);
      try {
        await assert.rejects(connector.numberStatus!(await lookupNumber(subject.lookup!.known[0]!.msisdn)), (err: unknown) => {
          assert.ok(err instanceof LookupUnavailableError, String(err));
          assert.equal(err.connector, name);
          assert.match(err.reason, /HTTP 500/);
          return true;
        });
      } finally {
        subject.lookup!.fail(false);
      }
    });

    test('its HTTP routes answer bad input with a 4xx and never throw', async () => {
      for (const route of connector.routes?.() ?? []) {
        for (const body of [undefined, null, 'not json', {}, { from: 1 }, { to: 'x'.repeat(10_000) }, [], { type: 'FAX' }]) {
          let answer: ConnectorHttpResponse;
          try {
            answer = await route.handle({ method: route.method, path: route.path, query: {}, headers: {}, body, rawBody: JSON.stringify(body) ?? '' });
          } catch (err) {
            assert.fail(`${route.method} ${route.path} threw on ${JSON.stringify(body)}: ${(err as Error).message}`);
          }
          assert.ok(answer.status >= 400 && answer.status < 500, `${route.method} ${route.path} answered ${answer.status} to ${JSON.stringify(body)}`);
        }
      }
    });
  });
}
