// Loads a pool worker's module, through the TypeScript loader when it is TypeScript (a worker thread does not
// inherit the loader its process registered).
// Says when it is ready, so the pool's time limit counts the work, not the start of the thread.
import { parentPort, workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

if (workerData.entry.endsWith('.ts')) register();
await import(workerData.entry);
parentPort.postMessage({ ready: true });
