import { Writable } from 'node:stream';
import type { Logger } from 'pino';
import { createLogger } from '../../src/log-redaction.ts';

/** Every line a server's logger writes, kept in memory: the logger is made as `tern serve` makes its own. */
export class LogCapture {
  readonly lines: string[] = [];
  readonly logger: Logger;

  constructor(level: string) {
    const lines = this.lines;
    this.logger = createLogger(
      level,
      new Writable({
        write(chunk, _enc, done) {
          for (const line of String(chunk).split('\n')) if (line !== '') lines.push(line);
          done();
        },
      }),
    );
  }

  /** The lines as records. */
  records(): Array<Record<string, any>> {
    return this.lines.map((l) => JSON.parse(l) as Record<string, any>);
  }
}
