// The live message feed under the event stream: each committed event once, late commits included, nothing from
// before listening, and no reads of the database while nobody listens.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { uuidv7 } from '../../src/domain/ids.ts';
import { type FeedItem, MessageFeed, uuidv7Floor } from '../../src/core/feed/message-feed.ts';
import { recipientsOf } from '../../src/cli/csv.ts';
import { createTenant, forEachDialect, request, startTestServer, type Tenant, type TestServer } from '../support/server.ts';
import { eventually, sleep } from '../support/wait.ts';

it('floors a millisecond below every UUIDv7 of it and above those of earlier ones', () => {
  const t = Date.now() + 1_000;
  assert.ok(uuidv7Floor(t) <= uuidv7(t));
  assert.ok(uuidv7Floor(t - 1) < uuidv7Floor(t));
  assert.ok(oldId(t - 1) < uuidv7Floor(t));
  assert.match(uuidv7Floor(t), /^[0-9a-f]{8}-[0-9a-f]{4}-0000-0000-000000000000$/);
});

it('reads campaign files with or without a header, either separator, quoted fields', () => {
  assert.deepEqual(recipientsOf('number;text;refClient\r\n33612345678;"Hi; you";a\n\n+33 6 12 34 56 79;"say ""hi""";\n'), [
    { line: 2, to: '33612345678', text: 'Hi; you', refClient: 'a' },
    { line: 4, to: '+33 6 12 34 56 79', text: 'say "hi"' },
  ]);
  assert.deepEqual(recipientsOf('33612345678,Hello\n'), [{ line: 1, to: '33612345678', text: 'Hello' }]);
  assert.deepEqual(recipientsOf('\uFEFFmsisdn\n33612345678\n'), [{ line: 2, to: '33612345678' }]);
});

/** A UUIDv7 of the millisecond `ms` (uuidv7() never goes back in time, as a late event's id may be). */
function oldId(ms: number): string {
  return `${uuidv7Floor(ms).slice(0, 14)}7abc-8def-${Math.floor(Math.random() * 2 ** 48)
    .toString(16)
    .padStart(12, '0')}`;
}

forEachDialect('message feed', (dialect) => {
  let server: TestServer;
  let tenant: Tenant;
  before(async () => {
    server = await startTestServer(dialect);
    tenant = await createTenant(server, { balance: 5 });
  });
  after(() => server.stop());

  it('gives each event once, those committed late inside the window too, and nothing from before', async () => {
    const feed = new MessageFeed(server.app.store, { pollMs: 50, lookbackMs: 5_000 });
    const old = await request(server, 'POST', '/sms/v1/messages', { key: tenant.key, body: { recipient: { to: '33612345678' }, body: { text: 'before' } } });
    await eventually(
      async () => (await request(server, 'GET', `/sms/v1/messages/${old.body.messageId}`, { key: tenant.key })).body.status.value === 'DELIVERED',
    );
    const got: FeedItem[] = [];
    const other: FeedItem[] = [];
    const stop = await feed.subscribe([tenant.channelId], (items) => got.push(...items));
    const stopOther = await feed.subscribe(['01a2aaaa-0000-7000-8000-000000000000'], (items) => other.push(...items));
    const sent = await request(server, 'POST', '/sms/v1/messages', { key: tenant.key, body: { recipient: { to: '33612345678' }, body: { text: 'after' } } });
    await eventually(() => got.some((i) => i.event.status === 'DELIVERED'), 5_000, 'the DELIVERED event');
    // An event whose id (its time) is two seconds old, committed now: a receipt matched late.
    const late = {
      id: oldId(Date.now() - 2_000),
      message_id: sent.body.messageId,
      organisation_id: tenant.organisationId,
      channel_id: tenant.channelId,
      kind: 'STATUS',
      status: 'READ',
      detail: null,
      at: Date.now() - 2_000,
    };
    await server.app.store.db.insertInto('message_events').values(late).execute();
    await eventually(() => got.some((i) => i.event.id === late.id), 5_000, 'the late event');
    await sleep(300);
    assert.deepEqual(
      got.map((i) => [i.message.id, i.event.kind, i.event.status]),
      [
        [sent.body.messageId, 'ACCEPTED', 'ENROUTE'],
        [sent.body.messageId, 'STATUS', 'DELIVERED'],
        [sent.body.messageId, 'STATUS', 'READ'],
      ],
    );
    assert.equal(other.length, 0);
    const replay = await feed.since([tenant.channelId], got[0]!.event.id);
    assert.deepEqual(
      replay.map((i) => i.event.id),
      [got[1]!.event.id],
    );
    stop();
    stopOther();
    await feed.stop();
  });
});
