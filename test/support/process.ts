// Tern as a separate process, for what only a process can show: kill -9, restarts on the same database and port.
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { after } from 'node:test';
import { fileURLToPath } from 'node:url';
import { TEST_ADMIN_KEY, TEST_SECRET_KEY, UNLIMITED } from './server.ts';
import { eventually } from './wait.ts';

/** The server's entry point beside the test files: the suite runs compiled JavaScript (.test-build/), with no loader. */
export const TERN_MAIN = fileURLToPath(new URL('../../src/main.js', import.meta.url));

/** Every Tern process a test file started and that has not exited yet. */
const running = new Set<ChildProcess>();

// A test that failed half-way (a node that did not come up, an assertion before its clean-up) may leave a process
// running, and a running child keeps the file's process — and the suite — waiting for ever. Killed once the file's
// tests are over.
after(async () => {
  const left = [...running];
  if (left.length > 0) process.stdout.write(`# ${left.length} Tern process(es) left running by the tests: killed\n`);
  await Promise.all(
    left.map(async (child) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGKILL');
      await exited;
    }),
  );
});

export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export interface TernProcess {
  url: string;
  adminKey: string;
  child: ChildProcess;
  /** kill -9: no drain, no lease released, connections cut mid-request. */
  kill(): Promise<void>;
  /** SIGTERM, and waits for the drain to end. */
  stop(): Promise<void>;
}

/**
 * Starts `tern serve` on `port` (HTTP on 127.0.0.1, SMPP on an ephemeral port) and waits until it is ready (30 s, or
 * `readyWithinMs` for processes started together on a busy machine).
 */
export async function startTernProcess(databaseUrl: string, port: number, env: Record<string, string> = {}, readyWithinMs = 30_000): Promise<TernProcess> {
  const child = spawn(process.execPath, [TERN_MAIN, 'serve'], {
    env: {
      ...process.env,
      TERN_HTTP_HOST: '127.0.0.1',
      TERN_HTTP_PORT: String(port),
      TERN_SMPP_HOST: '127.0.0.1',
      TERN_SMPP_PORT: '0',
      TERN_DATABASE_URL: databaseUrl,
      TERN_ADMIN_KEY: TEST_ADMIN_KEY,
      TERN_LOG_LEVEL: 'silent',
      TERN_WEBHOOK_ALLOW_PRIVATE: 'true',
      TERN_SECRET_KEY: TEST_SECRET_KEY,
      TERN_RATE_LIMITS: UNLIMITED,
      TERN_AUTH_FAILURES_PER_MINUTE: '1000000',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  running.add(child);
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      running.delete(child);
      resolve();
    }),
  );
  const url = `http://127.0.0.1:${port}`;
  const end = async (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };
  try {
    await eventually(async () => ((await fetch(`${url}/readyz`).catch(() => null))?.ok ? true : undefined), readyWithinMs, 'Tern to start');
  } catch (err) {
    await end('SIGKILL');
    throw err;
  }
  return { url, adminKey: TEST_ADMIN_KEY, child, kill: () => end('SIGKILL'), stop: () => end('SIGTERM') };
}
