import pc from 'picocolors';

/** Where a command writes and what it reads: the process's, or a test's. */
export interface Io {
  stdout: { write(s: string): unknown; isTTY?: boolean };
  stderr: { write(s: string): unknown; isTTY?: boolean };
  env: NodeJS.ProcessEnv;
  /** Reads standard input whole (a key piped to `tern login`). */
  readStdin(): Promise<string>;
}

export function processIo(): Io {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    readStdin: async () => {
      const chunks: Buffer[] = [];
      for await (const c of process.stdin) chunks.push(c as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    },
  };
}

/**
 * What `tern` exits with, so that scripts can tell failures apart (listed by `tern --help`).
 */
export const EXIT = {
  OK: 0,
  FAILED: 1,
  USAGE: 2,
  AUTH: 3,
  NOT_FOUND: 4,
  CONFLICT: 5,
  UNAVAILABLE: 6,
  NOT_DELIVERED: 7,
  PARTIAL: 8,
} as const;

export const EXIT_HELP = `Exit codes:
  0  done
  1  refused by Tern (invalid request) or failed
  2  wrong usage (unknown command, missing or bad argument)
  3  no key, or the key is refused or not allowed (401, 403)
  4  not found (404)
  5  conflict or not enough funds (409)
  6  Tern cannot be reached or is unavailable (connection refused, 429, 5xx)
  7  send --wait: the message ended without being delivered
  8  partly done: some rows or numbers were refused (campaign send, lookup --file)`;

/** A failure that ends the command with its exit code and a message on standard error. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT.FAILED,
  ) {
    super(message);
  }
}

/** Colours only on a terminal, and never with NO_COLOR. */
export function colours(io: Io) {
  return pc.createColors(Boolean(io.stdout.isTTY) && !io.env.NO_COLOR);
}
