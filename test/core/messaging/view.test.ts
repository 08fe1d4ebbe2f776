import assert from 'node:assert/strict';
import { test } from 'node:test';
import { messageObject } from '../../../src/core/messaging/view.ts';
import type { Channel } from '../../../src/store/channels.ts';
import type { MessageRow } from '../../../src/store/messages.ts';

const channel = { id: 'ch_1', name: 'Alerts', type: 'SMS', flow: 'TRANSACTIONAL' } as Channel;

const row = (over: Partial<MessageRow> = {}): MessageRow => ({
  id: '0192f0c4-0000-7000-8000-000000000001',
  organisation_id: 'org_1',
  payer_id: 'org_1',
  channel_id: 'ch_1',
  campaign_id: null,
  type: 'SMS',
  direction: 'MT',
  recipient: '33612345678',
  sender: null,
  body: JSON.stringify({ text: 'Hello', unused: null }),
  encoding: 'GSM7',
  part_count: 1,
  length: 5,
  price: 35_000,
  price_kind: 'STANDARD',
  charged: 35_000,
  status: 'ENROUTE',
  status_detail: null,
  status_at: Date.UTC(2026, 10, 29, 8, 0, 1),
  ref_client: null,
  callback_url_status: null,
  callback_url_mo: null,
  accepted_at: Date.UTC(2026, 10, 29, 8, 0, 0),
  send_at: Date.UTC(2026, 10, 29, 8, 0, 0),
  validity_until: null,
  origin_message_id: null,
  country: null,
  mcc_mnc: null,
  network: null,
  upstream_id: null,
  connector: null,
  source: 'REST',
  smpp_credential_id: null,
  registered_delivery: 0,
  day: '2026-11-29',
  extra: null,
  attempts: 0,
  route: null,
  cost: null,
  content_erased_at: null,
  ...over,
});

test('messageObject: a field Tern does not know is absent, never null', () => {
  const m = messageObject(row(), channel, 'https://t.example');
  assert.deepEqual(Object.keys(m), ['messageId', 'acceptedAt', 'sentDate', 'channel', 'type', 'direction', 'recipient', 'body', 'href', 'price', 'status']);
  assert.deepEqual(m.body, { text: 'Hello' });
  assert.deepEqual(m.price, { amount: 0.035, currency: 'EUR' });
  assert.deepEqual(m.status, { value: 'ENROUTE', deliveryDate: '2026-11-29T08:00:01.000Z' });
  assert.equal(m.href, 'https://t.example/sms/v1/messages/0192f0c4-0000-7000-8000-000000000001');
});

test('messageObject: every field known, in the contract’s order', () => {
  const m = messageObject(
    row({
      type: 'RCS',
      campaign_id: 'cmp_1',
      origin_message_id: 'm_0',
      sender: 'Tern',
      ref_client: 'r-1',
      callback_url_status: 'https://c.example/s',
      callback_url_mo: 'https://c.example/mo',
      price_kind: 'RICH',
      status: 'UNDELIVERED',
      status_detail: 'EXPIRED',
      country: 'FR',
      mcc_mnc: '20801',
      network: 'Orange',
      extra: JSON.stringify({ custom: 'v', gone: null }),
    }),
    channel,
    '',
  );
  assert.deepEqual(Object.keys(m), [
    'messageId',
    'acceptedAt',
    'sentDate',
    'campaignId',
    'originMessageId',
    'channel',
    'type',
    'direction',
    'recipient',
    'from',
    'body',
    'refClient',
    'callbackUrlStatus',
    'callbackUrlMo',
    'href',
    'custom',
    'price',
    'status',
  ]);
  assert.deepEqual(m.price, { amount: 0.035, currency: 'EUR', kind: 'RICH' });
  assert.deepEqual(m.status, {
    value: 'UNDELIVERED',
    deliveryDate: '2026-11-29T08:00:01.000Z',
    detail: 'EXPIRED',
    lookup: { mccMnc: '20801', country: 'France', network: 'Orange' },
  });
  assert.equal(m.href, '/rcs/v1/messages/0192f0c4-0000-7000-8000-000000000001');
});

test('messageObject: extra fields are own properties in their place, and never change the prototype', () => {
  const m = messageObject(row({ direction: 'MO', extra: '{"__proto__":{"polluted":true},"messageId":"x"}' }), channel, '');
  assert.equal(Object.getPrototypeOf(m), Object.prototype);
  assert.equal((m as Record<string, unknown>).polluted, undefined);
  assert.deepEqual(Object.keys(m).slice(0, 2), ['messageId', 'acceptedAt'], 'an extra field of an existing name keeps its place');
  assert.equal(m.messageId, 'x');
  assert.ok(Object.keys(m).includes('__proto__'));
  assert.equal(m.price, undefined, 'an MO message has no price or status');
});
