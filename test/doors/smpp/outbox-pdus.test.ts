import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { decodeOutboxPdus, encodeOutboxPdus } from '../../../src/doors/smpp/gateway.ts';
import type { DeliverSmFields } from '../../../src/protocols/smpp/deliver-sm.ts';

const fields = fc.record({
  source_addr_ton: fc.integer({ min: 0, max: 6 }),
  source_addr_npi: fc.integer({ min: 0, max: 18 }),
  source_addr: fc.string({ maxLength: 20 }),
  dest_addr_ton: fc.integer({ min: 0, max: 6 }),
  dest_addr_npi: fc.integer({ min: 0, max: 18 }),
  destination_addr: fc.string({ maxLength: 20 }),
  esm_class: fc.integer({ min: 0, max: 255 }),
  data_coding: fc.integer({ min: 0, max: 255 }),
  short_message: fc.uint8Array({ maxLength: 254 }).map((b) => Buffer.from(b)),
  receipted_message_id: fc.option(fc.string({ maxLength: 64 }), { nil: undefined }),
  message_state: fc.option(fc.integer({ min: 0, max: 8 }), { nil: undefined }),
});

test('deliver_sm fields stored in the outbox come back the same, any bytes in short_message', () => {
  fc.assert(
    fc.property(fc.array(fields, { minLength: 1, maxLength: 4 }), (list) => {
      const pdus = list.map((f) => Object.fromEntries(Object.entries(f).filter(([, v]) => v !== undefined)) as DeliverSmFields);
      const stored = encodeOutboxPdus(pdus);
      assert.deepEqual(decodeOutboxPdus(stored), pdus);
    }),
    { seed: 1128, numRuns: 100 },
  );
});
