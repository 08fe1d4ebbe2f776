// Waiting in tests: polling until something holds, and plain delays.

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

const POLL_INTERVAL_MS = 10;

/**
 * Polls `check` (sync or async) until it returns a value other than undefined or false, and returns that value; a
 * check that throws is tried again. Fails after `timeoutMs`, naming `what` and the last error, so a broken test
 * ends instead of hanging.
 */
export async function eventually<T>(check: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 10_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await check();
      if (v !== undefined && v !== false) return v;
    } catch (err) {
      last = err;
    }
    await sleep(POLL_INTERVAL_MS);
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
}
