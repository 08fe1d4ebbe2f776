import pc from 'picocolors';

/** Where a command writes and what it reads: the process's, or a test's. */
export interface Io {
  stdout: { write(s: string): unknown; isTTY?: boolean };
  stderr: { write(s: string): unknown; isTTY?: boolean };
  env: NodeJS.ProcessEnv;
  /** Reads standard input whole (a key piped to `tern login`). */
  readStdin(): Promise<string>;
  /**
   * Reads one line typed at the terminal without showing it (a key), after writing `prompt` to standard error; ends at
   * Enter. Absent when standard input is not a terminal.
   */
  readSecret?(prompt: string): Promise<string>;
  /** How tables are printed (`--output`): boxed for people, or tab-separated; by default boxed on a terminal only. */
  tables?: 'table' | 'tsv';
}

/** The formats of `--output`. */
export const OUTPUT_FORMATS = ['json', 'table', 'tsv'] as const;

/** A terminal's input as readHiddenLine reads it. */
export interface KeyInput {
  on(event: 'data', listener: (chunk: Buffer | string) => void): unknown;
  off(event: 'data', listener: (chunk: Buffer | string) => void): unknown;
  setRawMode?(raw: boolean): unknown;
  resume(): unknown;
  pause(): unknown;
}

/**
 * One line from a terminal in raw mode, echoing nothing: Enter ends it (a pasted key with its newline too), Backspace
 * takes back a character, Ctrl-D on an empty line ends it empty, Ctrl-C cancels (exit 130, as a shell does).
 */
export function readHiddenLine(input: KeyInput, write: (s: string) => void, prompt: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let typed = '';
    write(prompt);
    input.setRawMode?.(true);
    const finish = (err?: CliError) => {
      input.off('data', onData);
      input.setRawMode?.(false);
      input.pause();
      write('\n');
      if (err) reject(err);
      else resolve(typed);
    };
    const onData = (chunk: Buffer | string) => {
      for (const ch of typeof chunk === 'string' ? chunk : chunk.toString('utf8')) {
        if (ch === '\r' || ch === '\n') return finish();
        if (ch === '\u0003') return finish(new CliError('cancelled', 130));
        if (ch === '\u0004') {
          if (typed === '') return finish();
          continue;
        }
        if (ch === '\u007f' || ch === '\b') typed = [...typed].slice(0, -1).join('');
        else if (ch >= ' ') typed += ch;
      }
    };
    input.on('data', onData);
    input.resume();
  });
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
    ...(process.stdin.isTTY && {
      readSecret: (prompt: string) => readHiddenLine(process.stdin, (s) => process.stderr.write(s), prompt),
    }),
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
  PENDING: 9,
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
  8  partly done: some rows were refused or will not be delivered (campaign send), or numbers refused (lookup)
  9  migrate --status: migrations are pending`;

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
