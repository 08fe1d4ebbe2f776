import { Client } from './client.ts';
import type { Io } from './io.ts';
import { connection } from './profile.ts';

/** What every command gets: where it writes, and the API client of the connection (made when first needed). */
export class Context {
  exitCode = 0;
  private made: Client | null = null;

  constructor(
    readonly io: Io,
    private readonly urlOption: () => string | undefined,
  ) {}

  get client(): Client {
    if (!this.made) {
      const conn = connection(this.io);
      const url = this.urlOption();
      this.made = new Client(url ? { ...conn, url: url.replace(/\/+$/, '') } : conn);
    }
    return this.made;
  }
}
