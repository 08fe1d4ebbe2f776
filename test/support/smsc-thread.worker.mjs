// The SMSC of smsc-thread.ts, in a thread of its own: it answers binds and every submit_sm at once, and notes when
// each submit arrived and on which connection. Plain JavaScript, so the thread needs no loader.
import { parentPort } from 'node:worker_threads';
import smpp from 'smpp';

const arrivals = [];
let connections = 0;
let submitted = 0;
let bound = 0;
const server = smpp.createServer((session) => {
  const connection = ++connections;
  session.on('error', () => {});
  const bind = (pdu) => {
    bound++;
    session.once('close', () => bound--);
    session.send(pdu.response());
  };
  session.on('bind_transceiver', bind);
  session.on('bind_transmitter', bind);
  session.on('enquire_link', (pdu) => session.send(pdu.response()));
  session.on('unbind', (pdu) => {
    session.send(pdu.response());
    session.close();
  });
  session.on('submit_sm', (pdu) => {
    arrivals.push({ at: Date.now(), connection });
    session.send(pdu.response({ message_id: String(++submitted) }));
  });
});
server.listen(0, '127.0.0.1', () => parentPort.postMessage({ port: server.address().port }));
parentPort.on('message', (m) => {
  if (m === 'state') parentPort.postMessage({ arrivals, bound });
  if (m === 'close') server.close(() => parentPort.close());
});
