// Loads a pool worker's TypeScript module: a worker thread does not inherit the loader its process registered.
// Says when it is ready, so the pool's time limit counts the work, not the start of the thread.
import { parentPort, workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
await import(workerData.entry);
parentPort.postMessage({ ready: true });
