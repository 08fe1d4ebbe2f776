import type { Store } from '../../store/db.ts';
import { eventIdsBetween, eventsAfter, eventsByIds, messagesByIds } from '../../store/message-feed.ts';
import type { MessageEventRow, MessageRow } from '../types.ts';

/** One message event with the message as it is now. */
export interface FeedItem {
  event: MessageEventRow;
  message: MessageRow;
}

export type FeedListener = (items: FeedItem[]) => void;

export interface MessageFeedOptions {
  /** How often the store is read while someone listens. */
  pollMs?: number;
  /**
   * How far back each read looks for events committed late: an event's id carries its time, and a transaction may
   * commit a little after the time of its events (grouped commits, receipts matched again later).
   */
  lookbackMs?: number;
  now?: () => number;
}

/** Most events one read takes; the next read goes on from there. */
const READ_LIMIT = 2_000;

/** The smallest UUIDv7 of a millisecond: ids of events from `ms` on sort at or after it. */
export function uuidv7Floor(ms: number): string {
  const h = Math.max(0, Math.floor(ms)).toString(16).padStart(12, '0');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-0000-0000-000000000000`;
}

interface Subscriber {
  channels: ReadonlySet<string>;
  listener: FeedListener;
}

/**
 * Message events as they are committed, for the clients that follow a channel live (the REST event stream). One
 * read of the store serves every listener of the node, and only while someone listens: the events committed since
 * the last read (by id, time-ordered), plus those that committed late inside the look-back window, each given once.
 * Events written by other nodes are seen the same way, since they are read from the database.
 */
export class MessageFeed {
  private readonly subscribers = new Set<Subscriber>();
  private readonly pollMs: number;
  private readonly lookbackMs: number;
  private readonly now: () => number;
  /** Ids already handed out (or present when listening began), with the time their id carries. */
  private readonly seen = new Map<string, number>();
  private high: string | null = null;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  /** The first read, which marks what is already there; listeners start after it. */
  private primed: Promise<void> | null = null;
  private stopped = false;

  constructor(
    private readonly store: Store,
    opts: MessageFeedOptions = {},
  ) {
    this.pollMs = opts.pollMs ?? 500;
    this.lookbackMs = opts.lookbackMs ?? 5_000;
    this.now = opts.now ?? Date.now;
  }

  /**
   * Calls `listener` with every event of `channelIds` committed after this resolves (a client that reads the current
   * state once it has resolved misses nothing); resolves with the way to stop.
   */
  async subscribe(channelIds: readonly string[], listener: FeedListener): Promise<() => void> {
    if (this.stopped) throw new Error('the message feed is stopped');
    const sub: Subscriber = { channels: new Set(channelIds), listener };
    this.subscribers.add(sub);
    if (!this.primed) {
      const first = this.read().catch(() => undefined);
      this.running = first;
      this.primed = first.then(() => {
        this.running = null;
        this.schedule(this.pollMs);
      });
    }
    await this.primed;
    return () => {
      this.subscribers.delete(sub);
      if (this.subscribers.size === 0) this.reset();
    };
  }

  /** Events of `channelIds` after the event `afterEventId`, oldest first (a client that reconnects catches up). */
  async since(channelIds: readonly string[], afterEventId: string, limit = 500): Promise<FeedItem[]> {
    return this.withMessages(await eventsAfter(this.store.db, afterEventId, limit, channelIds));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.subscribers.clear();
    this.reset();
    await this.running;
  }

  private reset(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.seen.clear();
    this.high = null;
    this.primed = null;
  }

  private schedule(delay: number): void {
    if (this.timer || this.stopped || this.subscribers.size === 0) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.running = this.read()
        .catch(() => undefined)
        .finally(() => {
          this.running = null;
          this.schedule(this.pollMs);
        });
    }, delay);
    this.timer.unref();
  }

  private async read(): Promise<void> {
    const floor = uuidv7Floor(this.now() - this.lookbackMs);
    const priming = this.high === null;
    const fresh: MessageEventRow[] = [];
    // Late commits: ids inside the window that were not there at the last read.
    if (!priming) {
      const late = (await eventIdsBetween(this.store.db, floor, this.high!)).filter((id) => !this.seen.has(id));
      if (late.length > 0) fresh.push(...(await eventsByIds(this.store.db, late)));
    }
    let after = this.high ?? floor;
    for (;;) {
      const rows = await eventsAfter(this.store.db, after, READ_LIMIT);
      fresh.push(...rows);
      if (rows.length < READ_LIMIT) break;
      after = rows[rows.length - 1]!.id;
    }
    for (const e of fresh) {
      this.seen.set(e.id, e.at);
      if (this.high === null || e.id > this.high) this.high = e.id;
    }
    this.high ??= uuidv7Floor(this.now());
    for (const [id] of this.seen) {
      if (id < floor) this.seen.delete(id);
    }
    // What was there before anyone listened is not news.
    if (priming || fresh.length === 0 || this.subscribers.size === 0) return;
    const wanted = fresh.filter((e) => [...this.subscribers].some((s) => s.channels.has(e.channel_id)));
    if (wanted.length === 0) return;
    const items = await this.withMessages(wanted.sort((a, b) => (a.id < b.id ? -1 : 1)));
    for (const sub of this.subscribers) {
      const mine = items.filter((i) => sub.channels.has(i.event.channel_id));
      if (mine.length > 0) {
        try {
          sub.listener(mine);
        } catch {
          // A listener's failure is its own (a closed connection); the others still get theirs.
        }
      }
    }
  }

  private async withMessages(events: MessageEventRow[]): Promise<FeedItem[]> {
    if (events.length === 0) return [];
    const messages = new Map((await messagesByIds(this.store.db, [...new Set(events.map((e) => e.message_id))])).map((m) => [m.id, m]));
    return events.flatMap((event) => {
      const message = messages.get(event.message_id);
      return message ? [{ event, message }] : [];
    });
  }
}
