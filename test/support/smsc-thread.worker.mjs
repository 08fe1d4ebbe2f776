// The SMSC of smsc-thread.ts, in a thread of its own: it answers binds and every submit_sm at once, and notes when
// each submit arrived and on which connection. Plain JavaScript, so the thread needs no loader.
//
// A thread the machine does not run for a while (a loaded machine's run queue) reads what came meanwhile when it runs
// again, all stamped at once: a timer every TICK_MS tells when that happened, and a submit read just after says how
// early it may have come (`notBefore`, the thread's last tick before it stopped).
import { parentPort } from 'node:worker_threads';
import smpp from 'smpp';

const TICK_MS = 10;
/** A tick this much later than the last one: the thread did not run in between. */
const STALL_MS = 50;
const arrivals = [];
let lastTick = Date.now();
/** The last time the thread did not run, as its timer found it. */
let lastStall = null;
let stalledMs = 0;
setInterval(() => {
  const now = Date.now();
  if (now - lastTick > STALL_MS) {
    lastStall = { from: lastTick, to: now };
    stalledMs += now - lastTick;
  }
  lastTick = now;
}, TICK_MS).unref();

/** The earliest a submit read now may have come: when the thread last ran, if it has just run again. */
function notBefore(now) {
  // Its timer has not run yet since the thread was stopped (the reads come first in the loop's turn).
  if (now - lastTick > STALL_MS) return lastTick;
  if (lastStall !== null && now - lastStall.to <= 2 * TICK_MS) return lastStall.from;
  return now;
}
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
    const at = Date.now();
    arrivals.push({ at, notBefore: notBefore(at), connection });
    session.send(pdu.response({ message_id: String(++submitted) }));
  });
});
server.listen(0, '127.0.0.1', () => parentPort.postMessage({ port: server.address().port }));
parentPort.on('message', (m) => {
  if (m === 'state') parentPort.postMessage({ arrivals, bound, stalledMs });
  if (m === 'close') server.close(() => parentPort.close());
});
