// Concatenated SMPP submits whose parts reach binds of one credential on two nodes sharing one PostgreSQL database.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type smpp from 'smpp';
import { encodeGsm7 } from '../../../src/domain/text.ts';
import { SmppConcatParts } from '../../../src/core/smpp/concat-parts.ts';
import { createTenant, request, startTestServer, type Tenant, type TestServer } from '../../support/server.ts';
import { call, packageClient } from '../../support/smpp.ts';
import { eventually, sleep } from '../../support/wait.ts';

const skip = process.env.TERN_TEST_DATABASE_URL ? false : 'PostgreSQL not available: TERN_TEST_DATABASE_URL is not set';

function udh8(ref: number, total: number, seq: number): Buffer {
  return Buffer.from([0x05, 0x00, 0x03, ref, total, seq]);
}

const PARTS = ['A'.repeat(153), 'B'.repeat(153), 'the end'];
const WHOLE = PARTS.join('');

describe('concatenated SMPP submits across a cluster [postgres]', { skip }, () => {
  let first: TestServer;
  let second: TestServer;
  const sessions: smpp.Session[] = [];
  let seq = 0;

  before(async () => {
    first = await startTestServer('postgres');
    second = await startTestServer('postgres', { TERN_DATABASE_URL: first.app.config.databaseUrl });
  });

  after(async () => {
    for (const s of sessions) s.close();
    await second?.stop();
    await first?.stop();
  });

  /** A tenant with an SMPP credential bound once on each node (transmitter on the first, transceiver on the second). */
  async function customer(balance = 10): Promise<{ t: Tenant; systemId: string; onFirst: smpp.Session; onSecond: smpp.Session }> {
    const t = await createTenant(first, { balance, channel: { defaultFromField: 'ACME' } });
    const systemId = `spread${++seq}`;
    const cred = await request(first, 'POST', `/admin/v1/channels/${t.channelId}/smpp-credentials`, {
      key: first.adminKey,
      body: { systemId, password: 'pw123', maxBinds: 4 },
    });
    assert.equal(cred.status, 201, cred.text);
    const bind = async (node: TestServer, command: string) => {
      const s = await packageClient(node.smppPort);
      sessions.push(s);
      assert.equal((await call(s, command, { system_id: systemId, password: 'pw123' })).command_status, 0);
      return s;
    };
    return { t, systemId, onFirst: await bind(first, 'bind_transmitter'), onSecond: await bind(second, 'bind_transceiver') };
  }

  function part(session: smpp.Session, destination: string, ref: number, n: number) {
    return call(session, 'submit_sm', {
      source_addr: 'ACME',
      destination_addr: destination,
      esm_class: 0x40,
      data_coding: 0,
      short_message: Buffer.concat([udh8(ref, 3, n), encodeGsm7(PARTS[n - 1]!)]),
    });
  }

  async function balance(t: Tenant): Promise<number> {
    const r = await request(first, 'GET', `/admin/v1/organisations/${t.organisationId}`, { key: first.adminKey });
    return r.body.balance.amount;
  }

  async function messages(t: Tenant, node: TestServer = first) {
    const r = await request(node, 'GET', '/sms/v1/messages?pageSize=100', { key: t.key });
    assert.equal(r.status, 200, r.text);
    return r.body.items as Array<{ messageId: string; body: { text: string; messagePartCount: number }; price: { amount: number } }>;
  }

  async function charges(messageId: string): Promise<number> {
    const rows = await first.app.store.db.selectFrom('ledger').select('id').where('message_id', '=', messageId).execute();
    return rows.length;
  }

  async function partsWaiting(): Promise<number> {
    const rows = await first.app.store.db.selectFrom('smpp_concat_parts').select('seq').execute();
    return rows.length;
  }

  async function partsOf(messageId: string) {
    return first.app.store.db.selectFrom('smpp_concat_parts').selectAll().where('message_id', '=', messageId).orderBy('seq').execute();
  }

  async function expiredCount(node: TestServer, systemId: string): Promise<number> {
    const text = await (await fetch(`${node.url}/metrics`)).text();
    const line = text
      .split('\n')
      .find((l) => l.startsWith('tern_smpp_errors_total{') && l.includes(`system_id="${systemId}"`) && l.includes('reason="concat_expired"'));
    return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
  }

  test('a 3-part message whose parts reach both nodes is stored once, whole, and charged once', async () => {
    const { t, onFirst, onSecond } = await customer();
    const before = await balance(t);
    // Parts 1 and 3 on the first node, 2 on the second (part 1 sent again, to the second node); then 2 on the second
    // node, 3 on the first, 1 on the second.
    const orders: Array<Array<[smpp.Session, number]>> = [
      [
        [onFirst, 1],
        [onSecond, 1],
        [onSecond, 2],
        [onFirst, 3],
      ],
      [
        [onSecond, 2],
        [onFirst, 3],
        [onSecond, 1],
      ],
    ];
    const ids: string[] = [];
    for (const [i, order] of orders.entries()) {
      const answers = [];
      for (const [session, n] of order) answers.push(await part(session, `3361234567${i}`, 40 + i, n));
      assert.deepEqual(
        answers.map((a) => a.command_status),
        order.map(() => 0),
      );
      const id = String(answers[0]!['message_id']);
      assert.deepEqual(
        answers.map((a) => a['message_id']),
        order.map(() => id),
        'every part answered with the message’s id',
      );
      ids.push(id);
    }
    const list = await messages(t, second);
    assert.deepEqual(list.map((m) => m.messageId).sort(), [...ids].sort());
    for (const m of list) {
      assert.equal(m.body.text, WHOLE);
      assert.equal(m.body.messagePartCount, 3);
      assert.equal(await charges(m.messageId), 1, 'one charge');
    }
    const spent = before - (await balance(t));
    assert.ok(Math.abs(spent - list.reduce((sum, m) => sum + m.price.amount, 0)) < 1e-9, `spent ${spent}`);
    assert.ok(list[0]!.price.amount > 0);
    assert.equal(await partsWaiting(), 0);
  });

  test('parts sent at the same time to both nodes make each message exactly once', async () => {
    const { t, onFirst, onSecond } = await customer();
    const count = 12;
    const answers = await Promise.all(
      Array.from({ length: count }, (_, i) =>
        Promise.all([1, 2, 3].map((n) => part((i + n) % 2 === 0 ? onFirst : onSecond, `336123450${String(i).padStart(2, '0')}`, 7, n))),
      ),
    );
    for (const parts of answers) {
      assert.deepEqual(
        parts.map((a) => a.command_status),
        [0, 0, 0],
      );
      assert.equal(new Set(parts.map((a) => a['message_id'])).size, 1);
    }
    const list = await messages(t);
    assert.equal(list.length, count);
    assert.deepEqual(new Set(list.map((m) => m.messageId)), new Set(answers.map((parts) => String(parts[0]!['message_id']))));
    for (const m of list) {
      assert.equal(m.body.text, WHOLE);
      assert.equal(await charges(m.messageId), 1);
    }
    assert.equal(await partsWaiting(), 0);
  });

  test('a message whose last part never comes expires once, on one node, uncharged', async () => {
    const { t, systemId, onFirst, onSecond } = await customer();
    const before = await balance(t);
    const p1 = await part(onFirst, '33611112222', 9, 1);
    const p2 = await part(onSecond, '33611112222', 9, 2);
    assert.deepEqual([p1.command_status, p2.command_status], [0, 0]);
    assert.equal(p1['message_id'], p2['message_id']);
    assert.equal(await partsWaiting(), 2, 'both parts kept, whichever node took them');
    // Its time runs out now rather than in a minute.
    await first.app.store.db
      .updateTable('smpp_concat_parts')
      .set({ expires_at: Date.now() - 1 })
      .execute();
    await eventually(async () => ((await partsWaiting()) === 0 ? true : undefined), 15_000, 'the parts expired');
    const expired = await eventually(
      async () => {
        const n = (await expiredCount(first, systemId)) + (await expiredCount(second, systemId));
        return n > 0 ? n : undefined;
      },
      5_000,
      'the expiry counted',
    );
    assert.equal(expired, 1, 'expired by one node only');
    assert.deepEqual(await messages(t), []);
    assert.equal(await balance(t), before);
    // The third part, late: it starts a message of its own, which waits.
    const late = await part(onSecond, '33611112222', 9, 3);
    assert.equal(late.command_status, 0);
    assert.notEqual(late['message_id'], p1['message_id']);
    assert.equal(await partsWaiting(), 1);
  });

  test('a whole message refused, stored or not, leaves no parts behind', async () => {
    const { t, onFirst, onSecond } = await customer();
    // Refused before anything is stored: a sender longer than a sender may be.
    const refused = [];
    for (const [session, n] of [
      [onFirst, 1],
      [onSecond, 2],
      [onFirst, 3],
    ] as const) {
      refused.push(
        await call(session, 'submit_sm', {
          source_addr: 'TOOLONGSENDER',
          destination_addr: '33644445555',
          esm_class: 0x40,
          data_coding: 0,
          short_message: Buffer.concat([udh8(13, 3, n), encodeGsm7(PARTS[n - 1]!)]),
        }),
      );
    }
    assert.deepEqual(
      refused.map((a) => a.command_status === 0),
      [true, true, false],
    );
    assert.equal((await partsOf(String(refused[0]!['message_id']))).length, 0);
    // Stored refused (UNDELIVERABLE), for lack of credit.
    assert.deepEqual(await messages(t), []);
    const broke = await customer(0);
    const answers = [
      await part(broke.onSecond, '33644445555', 14, 1),
      await part(broke.onFirst, '33644445555', 14, 2),
      await part(broke.onSecond, '33644445555', 14, 3),
    ];
    assert.deepEqual(
      answers.map((a) => a.command_status === 0),
      [true, true, false],
    );
    const id = String(answers[0]!['message_id']);
    assert.equal((await partsOf(id)).length, 0);
    assert.deepEqual(
      (await messages(broke.t)).map((m) => m.messageId),
      [id],
    );
    assert.equal(await charges(id), 0);
  });

  // A node that stops between the transaction taking a whole message and the one storing it leaves the message's
  // parts taken, with no message: what follows builds that state with the completing transaction itself.
  test('a whole message its node never stored is stored by another node, once, charged once', async () => {
    const { t, onFirst, onSecond } = await customer();
    const before = await balance(t);
    const p1 = await part(onFirst, '33622223333', 11, 1);
    const p2 = await part(onSecond, '33622223333', 11, 2);
    assert.deepEqual([p1.command_status, p2.command_status], [0, 0]);
    const id = String(p1['message_id']);
    const [waiting] = await partsOf(id);
    assert.ok(waiting);
    // The last part, on a node that stops right after its transaction commits: it never submits the message.
    const stopping = new SmppConcatParts(first.app.store, 'stopped-node');
    const added = await stopping.add(
      waiting.credential_id,
      {
        source: 'ACME',
        destination: '33622223333',
        ref: 11,
        total: 3,
        seq: 3,
        payload: encodeGsm7(PARTS[2]!),
        dataCoding: 0,
        meta: waiting.meta,
        expiresAt: waiting.expires_at,
      },
      { maxParts: 1_000, maxBytes: 2 ** 21 },
    );
    assert.equal(added.kind, 'complete');
    assert.equal(added.kind === 'complete' && added.messageId, id);
    const taken = await partsOf(id);
    assert.deepEqual(
      taken.map((r) => [r.seq, r.taken_by]),
      [
        [1, 'stopped-node'],
        [2, 'stopped-node'],
        [3, 'stopped-node'],
      ],
      'kept, taken',
    );
    assert.deepEqual(await messages(t), []);
    // Long enough ago for the other nodes to take it over.
    await first.app.store.db
      .updateTable('smpp_concat_parts')
      .set({ taken_at: Date.now() - 60_000 })
      .where('message_id', '=', id)
      .execute();

    const [stored] = await eventually(
      async () => {
        const list = await messages(t, second);
        return list.length > 0 ? list : undefined;
      },
      20_000,
      'the message stored',
    );
    assert.equal(stored!.messageId, id, 'stored under the id its parts were answered with');
    assert.equal(stored!.body.text, WHOLE);
    assert.equal(stored!.body.messagePartCount, 3);
    await eventually(async () => ((await partsOf(id)).length === 0 ? true : undefined), 5_000, 'the parts deleted');
    // Both nodes sweep: a while later there is still one message, charged once.
    await sleep(6_000);
    // The node that took it, were it only slow, storing it too: the id is taken, nothing is charged.
    const messaging = first.app.services.messaging;
    const channel = await messaging.channel(t.channelId);
    await assert.rejects(first.app.services.sms.send(channel, { to: '33622223333', text: WHOLE, source: 'SMPP', messageId: id }));
    assert.equal((await messages(t)).length, 1);
    assert.equal(await charges(id), 1, 'one charge');
    const spent = before - (await balance(t));
    assert.ok(stored!.price.amount > 0 && Math.abs(spent - stored!.price.amount) < 1e-9, `spent ${spent}`);
  });

  test('a whole message left taken although its node stored it loses its parts, and is not stored again', async () => {
    const { t, onFirst, onSecond } = await customer();
    const p1 = await part(onSecond, '33633334444', 12, 1);
    const p2 = await part(onFirst, '33633334444', 12, 2);
    const id = String(p1['message_id']);
    assert.equal(p2['message_id'], id);
    const kept = await partsOf(id);
    assert.equal(kept.length, 2);
    const p3 = await part(onFirst, '33633334444', 12, 3);
    assert.equal(p3.command_status, 0);
    assert.equal(await charges(id), 1);
    const afterStore = await balance(t);
    assert.equal((await partsOf(id)).length, 0, 'deleted with the message stored');
    // The parts as they were when the message was taken, still there long after.
    const takenAt = Date.now() - 60_000;
    await first.app.store.db
      .insertInto('smpp_concat_parts')
      .values([...kept, { ...kept[1]!, seq: 3, payload: encodeGsm7(PARTS[2]!) }].map((r) => ({ ...r, taken_at: takenAt, taken_by: 'stopped-node' })))
      .execute();
    await eventually(async () => ((await partsOf(id)).length === 0 ? true : undefined), 15_000, 'the parts deleted');
    const list = await messages(t);
    assert.deepEqual(
      list.map((m) => m.messageId),
      [id],
    );
    assert.equal(await charges(id), 1);
    assert.equal(await balance(t), afterStore);
  });
});
