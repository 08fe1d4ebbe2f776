// Loads a pool worker's module, through the TypeScript loader when it is TypeScript (a worker thread does not
// inherit the loader its process registered; the compiled build gives it JavaScript and needs no loader).
// Says when it is ready, so the pool's time limit counts the work, not the start of the thread.
import { parentPort, workerData } from 'node:worker_threads';

if (workerData.entry.endsWith('.ts')) (await import('tsx/esm/api')).register();
await import(workerData.entry);
parentPort.postMessage({ ready: true });
