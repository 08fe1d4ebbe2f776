import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { encodeGsm7 } from '../../../src/domain/text.ts';
import { SmppStatus } from '../../../src/protocols/smpp/pdu.ts';
import { createTenant, request, startTestServer } from '../../support/server.ts';
import { call, packageClient } from '../../support/smpp.ts';
import { eventually } from '../../support/wait.ts';

const skip = process.env.TERN_TEST_DATABASE_URL ? false : 'PostgreSQL not available: TERN_TEST_DATABASE_URL is not set';

describe('an SMPP credential’s limits across a cluster [postgres]', { skip }, () => {
  test('binds on two nodes share one rate', async () => {
    const first = await startTestServer('postgres');
    const second = await startTestServer('postgres', { TERN_DATABASE_URL: first.app.config.databaseUrl });
    const sessions: Array<Awaited<ReturnType<typeof packageClient>>> = [];
    try {
      const t = await createTenant(first, { balance: 100, channel: { defaultFromField: 'ACME' } });
      const cred = await request(first, 'POST', `/admin/v1/channels/${t.channelId}/smpp-credentials`, {
        key: first.adminKey,
        body: { systemId: 'shared', password: 'pw123', tps: 10, maxBinds: 4 },
      });
      assert.equal(cred.status, 201, cred.text);
      for (const node of [first, second]) {
        const s = await packageClient(node.smppPort);
        sessions.push(s);
        assert.equal((await call(s, 'bind_transmitter', { system_id: 'shared', password: 'pw123' })).command_status, 0);
      }
      // Each node gets 15 submits at once, just after a second begins (the limit counts whole seconds): 30 asked, 10 a
      // second allowed for the two together.
      await new Promise((r) => setTimeout(r, 1_000 - (Date.now() % 1_000) + 20));
      const started = Date.now();
      const answers = await Promise.all(
        sessions.flatMap((s, n) =>
          Array.from({ length: 15 }, (_, i) =>
            call(s, 'submit_sm', { destination_addr: `33612${n}${String(i).padStart(4, '0')}5`, short_message: encodeGsm7(`tps ${n} ${i}`) }),
          ),
        ),
      );
      const elapsed = Date.now() - started;
      const accepted = answers.filter((a) => a.command_status === 0).length;
      const throttled = answers.filter((a) => a.command_status === SmppStatus.ESME_RTHROTTLED).length;
      assert.equal(accepted + throttled, 30, answers.map((a) => a.command_status).join(','));
      // Within the second it started in, 10 at most for both nodes together (each allowing its own 10 would make 20).
      const windows = Math.floor(((started % 1_000) + elapsed) / 1_000) + 1;
      assert.ok(accepted <= 10 * windows, `${accepted} accepted over ${windows} second(s)`);
      assert.ok(accepted >= 5 && throttled > 0, `${accepted} accepted`);
    } finally {
      for (const s of sessions) s.close();
      await second.stop();
      await first.stop();
    }
  });

  test('maxBinds counts the binds of every node, and a bind given back is free on any node', async () => {
    const first = await startTestServer('postgres');
    const second = await startTestServer('postgres', { TERN_DATABASE_URL: first.app.config.databaseUrl });
    const sessions: Array<Awaited<ReturnType<typeof packageClient>>> = [];
    const open = async (node: typeof first) => {
      const s = await packageClient(node.smppPort);
      sessions.push(s);
      return s;
    };
    try {
      const t = await createTenant(first, { balance: 1 });
      const cred = await request(first, 'POST', `/admin/v1/channels/${t.channelId}/smpp-credentials`, {
        key: first.adminKey,
        body: { systemId: 'single', password: 'pw123', maxBinds: 1 },
      });
      assert.equal(cred.status, 201, cred.text);
      const onFirst = await open(first);
      assert.equal((await call(onFirst, 'bind_transceiver', { system_id: 'single', password: 'pw123' })).command_status, 0);
      const onSecond = await open(second);
      assert.equal(
        (await call(onSecond, 'bind_transceiver', { system_id: 'single', password: 'pw123' })).command_status,
        SmppStatus.ESME_RBINDFAIL,
        'the second node counts the first node’s bind',
      );
      await call(onFirst, 'unbind');
      // Given back when the first node's session has closed, a moment after the unbind is answered.
      const status = await eventually(
        async () => {
          const again = await open(second);
          const r = (await call(again, 'bind_transceiver', { system_id: 'single', password: 'pw123' })).command_status;
          return r === 0 ? r : undefined;
        },
        5_000,
        'the bind free again',
      );
      assert.equal(status, 0);
    } finally {
      for (const s of sessions) s.close();
      await second.stop();
      await first.stop();
    }
  });

  test('receipts go to a node with a receiver, not to one left with only a transmitter', async () => {
    const first = await startTestServer('postgres');
    const second = await startTestServer('postgres', { TERN_DATABASE_URL: first.app.config.databaseUrl });
    const sessions: Array<Awaited<ReturnType<typeof packageClient>>> = [];
    const open = async (node: typeof first, mode: string) => {
      const s = await packageClient(node.smppPort);
      sessions.push(s);
      assert.equal((await call(s, mode, { system_id: 'split', password: 'pw123' })).command_status, 0);
      return s;
    };
    try {
      const t = await createTenant(first, { balance: 10, channel: { defaultFromField: 'ACME' } });
      const cred = await request(first, 'POST', `/admin/v1/channels/${t.channelId}/smpp-credentials`, {
        key: first.adminKey,
        body: { systemId: 'split', password: 'pw123', maxBinds: 4 },
      });
      assert.equal(cred.status, 201, cred.text);
      const transmitter = await open(first, 'bind_transmitter');
      const firstReceiver = await open(first, 'bind_receiver');
      const receiver = await open(second, 'bind_receiver');
      const receipts: string[] = [];
      for (const s of [firstReceiver, receiver]) {
        s.on('deliver_sm', (pdu: any) => {
          s.send(pdu.response());
          receipts.push(String(pdu.receipted_message_id ?? ''));
        });
      }
      // The first node keeps only its transmitter.
      await call(firstReceiver, 'unbind');
      receipts.length = 0;
      const started = Date.now();
      const ids = await Promise.all(
        Array.from({ length: 40 }, async (_, i) => {
          const r = await call(transmitter, 'submit_sm', {
            destination_addr: `3361234${String(i).padStart(3, '0')}5`,
            registered_delivery: 1,
            short_message: encodeGsm7(`receipt ${i}`),
          });
          assert.equal(r.command_status, 0);
          return String(r.message_id);
        }),
      );
      await eventually(() => ids.every((id) => receipts.includes(id)), 15_000, 'every receipt on the second node’s receiver');
      assert.ok(Date.now() - started < 3_000, `receipts took ${Date.now() - started} ms`);
    } finally {
      for (const s of sessions) s.close();
      await second.stop();
      await first.stop();
    }
  });
});
