import assert from 'node:assert/strict';
import { once } from 'node:events';
import net from 'node:net';
import { after, describe, it } from 'node:test';
import { encodePdu, SmppStatus, type Pdu } from '../../../src/protocols/smpp/pdu.ts';
import { connectSmppSession, SmppSession, SmppSessionError, type RequestHandler, type SmppSessionOptions } from '../../../src/protocols/smpp/session.ts';
import { floodUntilBlocked, RawClient } from '../../support/smpp.ts';
import { eventually, sleep } from '../../support/wait.ts';

const servers: net.Server[] = [];
after(() => {
  for (const s of servers) s.close();
});

/** A TCP server wrapping each connection in a server-role SmppSession. */
async function serverSessions(options: Omit<SmppSessionOptions, 'role'> = {}) {
  const sessions: SmppSession[] = [];
  const server = net.createServer((socket) => sessions.push(new SmppSession(socket, { role: 'server', ...options })));
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as net.AddressInfo).port;
  return { port, sessions };
}

function clientSession(port: number, options: Omit<SmppSessionOptions, 'role'> = {}): Promise<SmppSession> {
  return connectSmppSession({ host: '127.0.0.1', port, ...options });
}

const bindOk: RequestHandler = (pdu) => (pdu.command.startsWith('bind_') ? { fields: { system_id: 'SMSC' } } : undefined);
const isCode = (code: string) => (e: SmppSessionError) => e.code === code;

/** A handler whose submit_sm answers wait until the test releases them. */
function gatedHandler() {
  const gates: Array<{ pdu: Pdu; release: (status?: number) => void }> = [];
  const handler: RequestHandler = (pdu) => {
    if (pdu.command.startsWith('bind_')) return { fields: { system_id: 'SMSC' } };
    return new Promise((resolve) => {
      gates.push({ pdu, release: (status = 0) => resolve({ status, fields: { message_id: `id-${pdu.sequence}` } }) });
    });
  };
  return { handler, gates };
}

describe('SmppSession bind state', { timeout: 30_000 }, () => {
  it('moves OPEN → BOUND_TRX on both sides and refuses requests the state does not allow', async () => {
    const { port, sessions } = await serverSessions({ handler: bindOk });
    const client = await clientSession(port);
    assert.equal(client.state, 'OPEN');
    await assert.rejects(client.request('submit_sm', { destination_addr: '1' }), isCode('STATE'));
    const resp = await client.bind('bind_transceiver', { system_id: 'a', password: 'b' });
    assert.equal(resp.fields['system_id'], 'SMSC');
    assert.equal(client.state, 'BOUND_TRX');
    assert.equal(sessions[0]!.state, 'BOUND_TRX');
    // The server may not send submit_sm to an ESME, and may deliver to a transceiver.
    await assert.rejects(sessions[0]!.request('submit_sm', {}), isCode('STATE'));
    await client.close();
    assert.equal(client.state, 'CLOSED');
    await eventually(() => sessions[0]!.state === 'CLOSED', 5_000, 'server session closed');
  });

  it('fails to connect with the socket error when nothing listens', async () => {
    const probe = net.createServer();
    probe.listen(0, '127.0.0.1');
    await once(probe, 'listening');
    const port = (probe.address() as net.AddressInfo).port;
    await new Promise((r) => probe.close(r));
    await assert.rejects(connectSmppSession({ host: '127.0.0.1', port }), /ECONNREFUSED/);
  });

  it('answers requests before bind with ESME_RINVBNDSTS and a second bind with ESME_RALYBND', async () => {
    const { port } = await serverSessions({ handler: bindOk });
    const raw = await RawClient.connect(port);
    const early = await raw.call('submit_sm', { destination_addr: '33600000000', short_message: Buffer.from('x') });
    assert.equal(early.command, 'submit_sm_resp');
    assert.equal(early.status, SmppStatus.ESME_RINVBNDSTS);
    assert.equal((await raw.call('bind_receiver', { system_id: 'a' })).status, 0);
    assert.equal((await raw.call('bind_receiver', { system_id: 'a' })).status, SmppStatus.ESME_RALYBND);
    // A receiver may not submit.
    assert.equal((await raw.call('submit_sm', { destination_addr: '1' })).status, SmppStatus.ESME_RINVBNDSTS);
    raw.destroy();
  });

  it('answers enquire_link itself and leaves after unbind', async () => {
    const { port, sessions } = await serverSessions({ handler: bindOk });
    const raw = await RawClient.connect(port);
    const el = await raw.call('enquire_link');
    assert.equal(el.command, 'enquire_link_resp');
    assert.equal(el.status, 0);
    await raw.call('bind_transmitter', { system_id: 'a' });
    const ub = await raw.call('unbind');
    assert.equal(ub.command, 'unbind_resp');
    assert.equal(ub.status, 0);
    await eventually(() => raw.closed, 5_000, 'connection closed after unbind');
    assert.equal(sessions[0]!.state, 'CLOSED');
  });
});

describe('SmppSession framing errors', { timeout: 30_000 }, () => {
  it('nacks an unknown command id and a malformed body with their sequence numbers, then carries on', async () => {
    const { port, sessions } = await serverSessions({ handler: bindOk });
    const malformed: number[] = [];
    const raw = await RawClient.connect(port);
    await eventually(() => sessions.length === 1, 5_000, 'session');
    sessions[0]!.on('malformed', (info) => malformed.push(info.sequence));

    const unknown = Buffer.alloc(16);
    unknown.writeUInt32BE(16, 0);
    unknown.writeUInt32BE(0x00000999, 4);
    unknown.writeUInt32BE(77, 12);
    raw.write(unknown);
    const nack1 = await raw.next();
    assert.equal(nack1.command, 'generic_nack');
    assert.equal(nack1.status, SmppStatus.ESME_RINVCMDID);
    assert.equal(nack1.sequence, 77);

    // A submit_sm whose sm_length (200) runs past the end of its PDU.
    const good = encodePdu('submit_sm', 78, 0, {
      destination_addr: '33600000000',
      short_message: Buffer.from('hello'),
    });
    const bad = Buffer.from(good);
    bad[bad.length - 6] = 200;
    raw.write(bad);
    const nack2 = await raw.next();
    assert.equal(nack2.command, 'generic_nack');
    assert.equal(nack2.status, SmppStatus.ESME_RINVCMDLEN);
    assert.equal(nack2.sequence, 78);

    // A bind_transmitter whose system_id has no terminating NUL.
    const noNul = Buffer.concat([Buffer.alloc(16), Buffer.from('abc')]);
    noNul.writeUInt32BE(noNul.length, 0);
    noNul.writeUInt32BE(0x00000002, 4);
    noNul.writeUInt32BE(79, 12);
    raw.write(noNul);
    const nack3 = await raw.next();
    assert.equal(nack3.status, SmppStatus.ESME_RINVCMDLEN);
    assert.equal(nack3.sequence, 79);

    assert.deepEqual(malformed, [77, 78, 79]);
    assert.equal((await raw.call('enquire_link')).status, 0);
    assert.equal((await raw.call('bind_transceiver', { system_id: 'a' })).status, 0);
    raw.destroy();
  });

  it('nacks a PDU that cannot be framed and drops the connection', async () => {
    const { port } = await serverSessions({ handler: bindOk });
    const raw = await RawClient.connect(port);
    const tooShort = Buffer.alloc(16);
    tooShort.writeUInt32BE(8, 0);
    // What follows cannot be trusted as PDUs: it must not be answered.
    raw.write(Buffer.concat([tooShort, Buffer.alloc(64, 0xff), encodePdu('enquire_link', 5)]));
    const nack = await raw.next();
    assert.equal(nack.command, 'generic_nack');
    assert.equal(nack.status, SmppStatus.ESME_RINVCMDLEN);
    await eventually(() => raw.closed, 5_000, 'connection closed');
    await assert.rejects(raw.next(50), /no PDU/);
  });

  it('answers a command the handler does not support with generic_nack ESME_RINVCMDID', async () => {
    const { port } = await serverSessions({ handler: bindOk });
    const raw = await RawClient.connect(port);
    await raw.call('bind_transceiver', { system_id: 'a' });
    const resp = await raw.call('data_sm', { destination_addr: '1' });
    assert.equal(resp.command, 'generic_nack');
    assert.equal(resp.status, SmppStatus.ESME_RINVCMDID);
    raw.destroy();
  });

  it('answers ESME_RSYSERR when the handler throws', async () => {
    const { port } = await serverSessions({
      handler: (pdu) => {
        if (pdu.command.startsWith('bind_')) return {};
        throw new Error('boom');
      },
    });
    const raw = await RawClient.connect(port);
    await raw.call('bind_transceiver', { system_id: 'a' });
    const resp = await raw.call('submit_sm', { destination_addr: '1' });
    assert.equal(resp.command, 'submit_sm_resp');
    assert.equal(resp.status, SmppStatus.ESME_RSYSERR);
    raw.destroy();
  });
});

describe('SmppSession outbound window', { timeout: 30_000 }, () => {
  it('keeps at most `window` requests in flight, queues the rest and matches out-of-order responses', async () => {
    const { handler, gates } = gatedHandler();
    const { port } = await serverSessions({ handler });
    const client = await clientSession(port, { window: 2 });
    await client.bind('bind_transmitter', { system_id: 'a' });
    const results = [1, 2, 3, 4, 5].map((i) => client.request('submit_sm', { destination_addr: String(i) }));
    await eventually(() => gates.length === 2, 5_000, 'two requests at the server');
    await sleep(50);
    assert.equal(gates.length, 2, 'the window holds the other three back');
    assert.deepEqual(client.outbound, { inFlight: 2, queued: 3 });
    gates[1]!.release(); // the second answers first
    await eventually(() => gates.length === 3, 5_000, 'a freed slot sends the next');
    for (const g of gates.slice(0, 1).concat(gates.slice(2))) g.release();
    await eventually(() => gates.length === 5, 5_000, 'all sent');
    gates[3]!.release();
    gates[4]!.release(SmppStatus.ESME_RINVDSTADR);
    const resps = await Promise.all(results);
    assert.deepEqual(
      resps.map((r) => r.fields['destination_addr'] ?? r.status),
      [0, 0, 0, 0, SmppStatus.ESME_RINVDSTADR],
    );
    // Each response belongs to its own request: message ids carry the server-side sequence.
    assert.deepEqual(
      resps.slice(0, 4).map((r) => r.fields['message_id']),
      gates.slice(0, 4).map((g) => `id-${g.pdu.sequence}`),
    );
    assert.deepEqual(
      gates.map((g) => g.pdu.fields['destination_addr']),
      ['1', '2', '3', '4', '5'],
    );
    await client.close();
  });

  it('rejects a request whose response does not come in time and frees its slot', async () => {
    const { handler, gates } = gatedHandler();
    const { port } = await serverSessions({ handler });
    const client = await clientSession(port, { window: 1, responseTimeoutMs: 100 });
    await client.bind('bind_transmitter', { system_id: 'a' });
    const first = client.request('submit_sm', { destination_addr: '1' });
    const second = client.request('submit_sm', { destination_addr: '2' });
    await assert.rejects(first, isCode('TIMEOUT'));
    await eventually(() => gates.length === 2, 5_000, 'the queued request goes out once the slot is free');
    gates[1]!.release();
    assert.equal((await second).status, 0);
    // The late answer to the first request is ignored.
    gates[0]!.release();
    assert.deepEqual(client.outbound, { inFlight: 0, queued: 0 });
    await client.close();
  });

  it('takes a new window while bound: a wider one sends what was queued at once, a narrower one lets those in flight finish first', async () => {
    const { handler, gates } = gatedHandler();
    const { port } = await serverSessions({ handler });
    const client = await clientSession(port, { window: 1 });
    await client.bind('bind_transmitter', { system_id: 'a' });
    const results = [1, 2, 3, 4, 5, 6].map((i) => client.request('submit_sm', { destination_addr: String(i) }));
    await eventually(() => gates.length === 1, 5_000, 'one request at the server');
    client.setWindow(4);
    assert.equal(client.window, 4);
    await eventually(() => gates.length === 4, 5_000, 'three more sent at once');
    client.setWindow(2);
    for (const g of gates.slice(0, 2)) g.release();
    await eventually(() => client.outbound.inFlight === 2, 5_000, 'two answered');
    await sleep(50);
    assert.deepEqual(client.outbound, { inFlight: 2, queued: 2 }, 'nothing more sent while two are in flight');
    gates[2]!.release();
    await eventually(() => gates.length === 5, 5_000, 'one more once one of the two is answered');
    await sleep(50);
    assert.equal(gates.length, 5);
    for (const g of gates.slice(3)) g.release();
    await eventually(() => gates.length === 6, 5_000, 'the last one');
    gates[5]!.release();
    assert.ok((await Promise.all(results)).every((r) => r.status === 0));
    assert.throws(() => client.setWindow(0), RangeError);
    await client.close();
  });

  it('rejects at once when the window and the queue are full', async () => {
    const { handler } = gatedHandler();
    const { port } = await serverSessions({ handler });
    const client = await clientSession(port, { window: 1, queueLimit: 1 });
    await client.bind('bind_transmitter', { system_id: 'a' });
    const a = client.request('submit_sm', { destination_addr: '1' });
    const b = client.request('submit_sm', { destination_addr: '2' });
    await assert.rejects(client.request('submit_sm', { destination_addr: '3' }), isCode('WINDOW_FULL'));
    client.destroy();
    await assert.rejects(a, isCode('CLOSED'));
    await assert.rejects(b, isCode('CLOSED'));
  });
});

describe('SmppSession enquire_link watchdog', { timeout: 30_000 }, () => {
  it('sends enquire_link when idle and stays up while they are answered', async () => {
    const server = net.createServer();
    servers.push(server);
    const enquires: number[] = [];
    server.on('connection', (socket) => {
      socket.on('error', () => {});
      socket.on('data', (chunk) => {
        // Answer every enquire_link the client sends (they arrive whole on loopback).
        for (let off = 0; off + 16 <= chunk.length; off += chunk.readUInt32BE(off)) {
          if (chunk.readUInt32BE(off + 4) === 0x15) {
            enquires.push(chunk.readUInt32BE(off + 12));
            socket.write(encodePdu('enquire_link_resp', chunk.readUInt32BE(off + 12)));
          }
        }
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const client = await clientSession((server.address() as net.AddressInfo).port, {
      enquireLinkIntervalMs: 30,
      enquireLinkTimeoutMs: 200,
    });
    await eventually(() => enquires.length >= 3, 5_000, 'three enquire_links');
    assert.equal(client.state, 'OPEN');
    client.destroy();
  });

  it('closes the session when enquire_link goes unanswered', async () => {
    const server = net.createServer((socket) => socket.on('error', () => {}));
    servers.push(server);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const client = await clientSession((server.address() as net.AddressInfo).port, {
      enquireLinkIntervalMs: 30,
      enquireLinkTimeoutMs: 60,
    });
    const [reason] = await once(client, 'close');
    assert.equal(reason, 'enquire_link unanswered');
    assert.equal(client.state, 'CLOSED');
  });
});

describe('SmppSession inbound backpressure', { timeout: 30_000 }, () => {
  it('runs at most M handlers, pauses reading, and resumes when one completes', async () => {
    const { handler, gates } = gatedHandler();
    const { port, sessions } = await serverSessions({ handler, maxConcurrentRequests: 4 });
    const raw = await RawClient.connect(port);
    await raw.call('bind_transmitter', { system_id: 'a' });
    for (let i = 0; i < 10; i++) raw.send('submit_sm', { destination_addr: String(i) });
    await eventually(() => gates.length === 4, 5_000, 'four handlers');
    await sleep(50);
    assert.equal(gates.length, 4);
    assert.deepEqual(sessions[0]!.inbound, { running: 4, paused: true });
    gates[2]!.release();
    const resp = await raw.next();
    assert.equal(resp.fields['message_id'], `id-${gates[2]!.pdu.sequence}`);
    await eventually(() => gates.length === 5, 5_000, 'a fifth handler once a slot is free');
    await sleep(50);
    assert.equal(gates.length, 5);
    for (const g of gates) g.release();
    // Four slots free at once: four more come in, and the tenth waits for the next slot.
    await eventually(() => gates.length === 9, 5_000, 'four more');
    await sleep(50);
    assert.equal(gates.length, 9);
    for (const g of gates) g.release();
    await eventually(() => gates.length === 10, 5_000, 'the last one');
    gates[9]!.release();
    raw.destroy();
  });

  it('does not read a flood into memory while its handlers are stuck', async () => {
    const { handler, gates } = gatedHandler();
    const { port, sessions } = await serverSessions({ handler, maxConcurrentRequests: 4 });
    const raw = await RawClient.connect(port);
    await raw.call('bind_transmitter', { system_id: 'a' });
    const one = encodePdu('submit_sm', 1, 0, {
      destination_addr: '33600000000',
      short_message: Buffer.alloc(100, 0x41),
    });
    const written = await floodUntilBlocked(raw.socket, one);
    const serverSocket = sessions[0]!.socket;
    assert.ok(written < 100 * 2 ** 20, 'the client could not send everything: the server stopped reading');
    assert.equal(gates.length, 4, 'no more handlers than M');
    assert.ok(serverSocket.bytesRead < 2_000_000, `the server read ${serverSocket.bytesRead} of ${written} bytes`);
    assert.ok(serverSocket.readableLength <= 128 * 1024, `buffered ${serverSocket.readableLength}`);
    raw.destroy();
  });
});
