import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { encodePdu } from '../../../src/protocols/smpp/pdu.ts';
import { createTenant, forEachDialect, request, startTestServer, type TestServer } from '../../support/server.ts';
import { RawClient } from '../../support/smpp.ts';

const RUNS = Number(process.env.TERN_FUZZ_RUNS_SMPP ?? 120);
const SEED = Number(process.env.TERN_FUZZ_SEED ?? 20261124);

const COMMAND_IDS = [
  0x00000001, 0x00000002, 0x00000003, 0x00000004, 0x00000005, 0x00000006, 0x00000007, 0x00000008, 0x00000009, 0x00000015, 0x00000021, 0x00000103, 0x80000000,
  0x80000004, 0x80000005, 0x80000015, 0x00000777, 0xffffffff,
];

/** One frame: a PDU whose body is random (under a valid or a lying length), or a submit_sm whose fields are random. */
const frame = fc.oneof(
  fc
    .record({ id: fc.constantFrom(...COMMAND_IDS), body: fc.uint8Array({ maxLength: 300 }), lie: fc.constantFrom(0, 0, 0, 1, -1, 7) })
    .map(({ id, body, lie }) => {
      const b = Buffer.alloc(16 + body.length);
      b.writeUInt32BE(b.length + lie, 0);
      b.writeUInt32BE(id, 4);
      b.writeUInt32BE(0, 8);
      b.writeUInt32BE(4242, 12);
      Buffer.from(body).copy(b, 16);
      return { bytes: b, framed: lie === 0 };
    }),
  fc
    .record({
      esm: fc.constantFrom(0, 0x40, 0x03, 0x04, 0xff),
      dc: fc.constantFrom(0, 3, 4, 8, 0xf5, 0x11),
      text: fc.uint8Array({ maxLength: 254 }),
      udh: fc.option(fc.tuple(fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 255 }))),
      tlvs: fc.dictionary(
        fc.constantFrom('sar_msg_ref_num', 'sar_total_segments', 'sar_segment_seqnum', 'user_message_reference', 'source_port'),
        fc.integer({ min: 0, max: 255 }),
      ),
      to: fc.constantFrom('33612345678', '', '0', '+', 'x'.repeat(20), '3361234567800000'),
      from: fc.constantFrom('Tern', '', '33612345678', 'ÿÿÿ'),
    })
    .map(({ esm, dc, text, udh, tlvs, to, from }) => {
      const sm = udh ? Buffer.concat([Buffer.from([5, 0, 3, udh[0], udh[1], udh[2]]), Buffer.from(text)]).subarray(0, 254) : Buffer.from(text);
      try {
        return {
          bytes: encodePdu('submit_sm', 4243, 0, { esm_class: esm, data_coding: dc, short_message: sm, destination_addr: to, source_addr: from, ...tlvs }),
          framed: true,
        };
      } catch {
        return { bytes: encodePdu('enquire_link', 4243), framed: true };
      }
    }),
);

/** The next PDU answering `sequence` (others, such as nacks of stray responses, are skipped); null after 5 s. */
async function answerTo(c: RawClient, sequence: number) {
  const until = Date.now() + 5_000;
  while (Date.now() < until) {
    const pdu = await c.next(until - Date.now()).catch(() => null);
    if (pdu === null) return null;
    if (pdu.sequence === sequence) return pdu;
  }
  return null;
}

forEachDialect('fuzz: the SMPP server', (dialect) => {
  let server: TestServer;
  const systemId = 'fuzzer';
  const password = 'fuzzpw1';
  before(async () => {
    server = await startTestServer(dialect);
    const t = await createTenant(server, { balance: 100, channel: { fromFieldList: ['Tern'] } });
    const r = await request(server, 'POST', `/admin/v1/channels/${t.channelId}/smpp-credentials`, {
      key: server.adminKey,
      body: { systemId, password, maxBinds: 100 },
    });
    assert.equal(r.status, 201, r.text);
  });
  after(() => server.stop());

  test(`random PDUs on a bound session: each framed one is answered, the session lives on unless framing is lost, the server stays up (seed ${SEED})`, async () => {
    let answered = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(frame, { minLength: 1, maxLength: 5 }), async (frames) => {
        const c = await RawClient.connect(server.smppPort);
        try {
          assert.equal((await c.call('bind_transceiver', { system_id: systemId, password })).status, 0);
          let sequence = 1_000;
          for (const f of frames) {
            const bytes = Buffer.from(f.bytes);
            if (bytes.length >= 16) bytes.writeUInt32BE(++sequence, 12);
            c.write(bytes);
            if (!f.framed) break;
            const id = bytes.readUInt32BE(4);
            // Responses are not answered (a stray one is dropped, or nacked when unreadable).
            if (id >= 0x80000000) continue;
            // Every framed request gets an answer of its own sequence: a response or a generic_nack, never silence.
            const answer = await answerTo(c, sequence);
            if (answer === null && c.closed) return;
            assert.ok(answer, `no answer to ${bytes.subarray(0, 32).toString('hex')}`);
            answered++;
            // After an unbind the session ends.
            if (id === 0x00000006) return;
          }
          if (!frames.every((f) => f.framed)) {
            // A length that lies: what follows cannot be framed; the server may drop the connection, or wait for more.
            return;
          }
          c.write(encodePdu('enquire_link', 99_999));
          const alive = await answerTo(c, 99_999);
          assert.equal(alive?.command, 'enquire_link_resp');
        } finally {
          c.destroy();
        }
      }),
      { seed: SEED, numRuns: RUNS },
    );
    process.stdout.write(`# ${dialect}: ${answered} random PDUs answered\n`);
    // Still serving: a clean bind and submit.
    const c = await RawClient.connect(server.smppPort);
    try {
      assert.equal((await c.call('bind_transceiver', { system_id: systemId, password })).status, 0);
      const ok = await c.call('submit_sm', { source_addr: 'Tern', destination_addr: '33612345678', short_message: Buffer.from('after the fuzz') });
      assert.equal(ok.status, 0);
    } finally {
      c.destroy();
    }
  });
});
