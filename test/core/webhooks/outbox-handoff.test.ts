import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { MessagingService } from '../../../src/core/messaging/service.ts';
import { type WebhookHandoff, WebhookOutbox } from '../../../src/core/webhooks/outbox.ts';
import type { Channel } from '../../../src/store/channels.ts';
import { inTransaction, type Store } from '../../../src/store/db.ts';
import type { MessageEventRow, MessageRow } from '../../../src/store/messages.ts';
import type { WebhookDeliveryRow } from '../../../src/store/webhooks.ts';
import { WebhookHttpClient } from '../../../src/doors/webhooks/http-client.ts';
import { WebhookSender } from '../../../src/doors/webhooks/sender.ts';
import { startReceiver } from '../../support/receiver.ts';
import { eventually } from '../../support/wait.ts';
import pino from 'pino';
import { forEachDialect } from '../../support/server.ts';
import { twoNodesForSuite } from '../../support/stores.ts';

/** A sender with room for `room` deliveries to one origin, remembering what it was handed. */
class FakeSender implements WebhookHandoff {
  reserved = 0;
  taken: WebhookDeliveryRow[] = [];
  constructor(
    private readonly origin: string,
    private room: number,
  ) {}
  taking(): boolean {
    return this.room > 0;
  }
  reserve(origin: string, _organisation: string, now: number): number | null {
    if (origin !== this.origin || this.room === 0) return null;
    this.room--;
    this.reserved++;
    return now + 60_000;
  }
  take(rows: WebhookDeliveryRow[]): void {
    this.reserved -= rows.length;
    this.taken.push(...rows);
  }
  release(reserved: Array<{ origin: string; organisation: string }>): void {
    this.reserved -= reserved.length;
    this.room += reserved.length;
  }
}

const channel = {
  id: 'ch-1',
  name: 'c',
  type: 'SMS',
  flow: 'TRANSACTIONAL',
  defaultCallbackUrlStatus: null,
  defaultCallbackUrlMo: null,
  webhookSecret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  webhookSecretPrevious: null,
  webhookSecretPreviousUntil: null,
} as unknown as Channel;
const messaging = { channel: async () => channel } as unknown as MessagingService;

/** An outbox whose deliveries post a small body to the message's status callback. */
function outboxOn(store: Store): WebhookOutbox {
  const outbox = new WebhookOutbox(store, messaging, () => 'http://tern.test', [1_000]);
  outbox.registerFormatter((m, e) => [{ url: m.callback_url_status!, method: 'POST', body: JSON.stringify({ event: e.id }) }]);
  return outbox;
}

let n = 0;
/** A message with a status callback to `url`, and a status event of it at `at`. */
function statusOf(url: string, messageId = `m-${String(++n).padStart(6, '0')}`, at = Date.now()): { message: MessageRow; event: MessageEventRow } {
  const message = { id: messageId, organisation_id: 'org-1', channel_id: channel.id, callback_url_status: url, callback_url_mo: null } as unknown as MessageRow;
  const event: MessageEventRow = {
    id: `e-${++n}`,
    message_id: messageId,
    organisation_id: 'org-1',
    channel_id: channel.id,
    kind: 'STATUS',
    status: 'DELIVERED',
    detail: null,
    at,
  };
  return { message, event };
}

forEachDialect('webhook outbox: deliveries handed to this node’s sender as they commit', (dialect) => {
  const nodes = twoNodesForSuite(dialect);

  const write = (store: Store, outbox: WebhookOutbox, items: Array<{ message: MessageRow; event: MessageEventRow }>) =>
    inTransaction(store, (tx) =>
      outbox.hook(
        tx,
        items.map((i) => i.event),
        new Map(items.map((i) => [i.message.id, i.message])),
      ),
    );
  const stored = (store: Store, messageIds: string[]) =>
    store.db
      .selectFrom('webhook_deliveries')
      .select(['id', 'message_id', 'lease_until', 'origin'])
      .where('message_id', 'in', messageIds)
      .orderBy('id')
      .execute();

  it('hands deliveries the sender has room for once committed, leased, so no node claims them; the rest wake the claims', async () => {
    const outbox = outboxOn(nodes.a);
    const sender = new FakeSender('http://hooks.test', 2);
    outbox.handTo(sender);
    const woken: string[] = [];
    const off = nodes.a.signals.on('webhooks', () => woken.push('webhooks'));
    const items = [statusOf('http://hooks.test/a'), statusOf('http://other.test/a'), statusOf('http://hooks.test/b'), statusOf('http://hooks.test/c')];
    await inTransaction(nodes.a, async (tx) => {
      await outbox.hook(
        tx,
        items.map((i) => i.event),
        new Map(items.map((i) => [i.message.id, i.message])),
      );
      assert.equal(sender.taken.length, 0, 'nothing handed before the commit');
      assert.equal(sender.reserved, 2);
    });
    off();
    assert.deepEqual(
      sender.taken.map((d) => d.message_id),
      [items[0]!.message.id, items[2]!.message.id],
    );
    assert.equal(sender.reserved, 0);
    assert.deepEqual(woken, ['webhooks'], 'the deliveries left over wake the senders');
    const rows = await stored(
      nodes.a,
      items.map((i) => i.message.id),
    );
    assert.deepEqual(
      rows.map((r) => r.origin),
      ['http://hooks.test', 'http://other.test', 'http://hooks.test', 'http://hooks.test'],
    );
    for (const d of sender.taken)
      assert.equal(Number(rows.find((r) => r.id === d.id)!.lease_until), d.lease_until, 'written with the lease it was handed with');
    const claimed = await outboxOn(nodes.b).claim(Date.now(), 10, 60_000);
    assert.deepEqual(
      claimed.map((d) => d.message_id).sort(),
      [items[1]!.message.id, items[3]!.message.id].sort(),
      'another node claims only what was not handed',
    );
  });

  it('never hands a delivery while an earlier one of its message is pending: they go in order', async () => {
    const outbox = outboxOn(nodes.a);
    const sender = new FakeSender('http://order.test', 10);
    const first = statusOf('http://order.test/s');
    // The first delivery was written before the sender took any (claimed by whichever node); it is still pending.
    await write(nodes.a, outbox, [first]);
    outbox.handTo(sender);
    const second = statusOf('http://order.test/s', first.message.id);
    const third = statusOf('http://order.test/s', first.message.id);
    await write(nodes.a, outbox, [second, third]);
    assert.equal(sender.taken.length, 0);
    assert.equal(sender.reserved, 0);
    // Two deliveries of a new message in one transaction: only the first is handed.
    const fresh = statusOf('http://order.test/t');
    const again = statusOf('http://order.test/t', fresh.message.id);
    await write(nodes.a, outbox, [fresh, again]);
    assert.deepEqual(
      sender.taken.map((d) => d.event_id),
      [fresh.event.id],
    );
    const rows = await stored(nodes.a, [fresh.message.id]);
    assert.equal(rows.filter((r) => r.lease_until !== null).length, 1);
  });

  it('a running sender sends what it is handed without claiming it, and records the outcome', async () => {
    const receiver = await startReceiver(() => 200);
    const outbox = outboxOn(nodes.a);
    const client = new WebhookHttpClient({ allowPrivate: true, timeoutMs: 5_000 });
    const sender = new WebhookSender(outbox, client, messaging, pino({ level: 'silent' }), { leaseMs: 60_000 });
    outbox.handTo(sender);
    // Earlier tests left deliveries waiting (to hosts that do not exist): the sender claims those, not these.
    const claimed: string[] = [];
    const claim = outbox.claimWithNextDue.bind(outbox);
    outbox.claimWithNextDue = async (...args) => {
      const r = await claim(...args);
      claimed.push(...r.rows.map((d) => d.message_id));
      return r;
    };
    sender.start();
    try {
      // Its first pass finds nothing waiting: from then on it takes deliveries as they are written.
      await eventually(() => sender.taking());
      const items = [statusOf(`${receiver.origin}/s`), statusOf(`${receiver.origin}/s`), statusOf(`${receiver.origin}/s`)];
      for (const i of items) await write(nodes.a, outbox, [i]);
      await eventually(async () => {
        const rows = await nodes.a.db
          .selectFrom('webhook_deliveries')
          .select(['state', 'lease_until'])
          .where(
            'message_id',
            'in',
            items.map((i) => i.message.id),
          )
          .execute();
        assert.deepEqual(
          rows.map((r) => [r.state, r.lease_until]),
          items.map(() => ['DELIVERED', null]),
        );
        return true;
      });
      assert.deepEqual(
        receiver.requests.map((r) => JSON.parse(r.body).event),
        items.map((i) => i.event.id),
        'sent in the order written',
      );
      assert.deepEqual(
        claimed.filter((id) => items.some((i) => i.message.id === id)),
        [],
        'none was claimed',
      );
    } finally {
      await sender.stop();
      await client.close();
      await receiver.close();
    }
  });

  it('gives the room back when the transaction rolls back, and writes nothing', async () => {
    const outbox = outboxOn(nodes.a);
    const sender = new FakeSender('http://rollback.test', 5);
    outbox.handTo(sender);
    const items = [statusOf('http://rollback.test/a'), statusOf('http://rollback.test/b')];
    await assert.rejects(
      inTransaction(nodes.a, async (tx) => {
        await outbox.hook(
          tx,
          items.map((i) => i.event),
          new Map(items.map((i) => [i.message.id, i.message])),
        );
        throw new Error('the event that wrote them failed');
      }),
      /failed/,
    );
    assert.equal(sender.taken.length, 0);
    assert.equal(sender.reserved, 0);
    assert.equal(
      (
        await stored(
          nodes.a,
          items.map((i) => i.message.id),
        )
      ).length,
      0,
    );
  });
});
