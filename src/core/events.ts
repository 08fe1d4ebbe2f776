import type { Db } from '../store/db.ts';
import type { MessageEventRow, MessageRow } from '../store/messages.ts';
import type { MessageStatus } from '../domain/status.ts';

/**
 * Something that must happen in the same transaction as a message event (an accept, a status change, an inbound
 * message): writing its webhook deliveries, its SMPP receipts, linking a reply to its conversation. It sees the
 * events and the messages as they are being committed.
 */
export type EventConsumer = (tx: Db, events: MessageEventRow[], messages: Map<string, MessageRow>) => Promise<void>;

/** A message's first final status: its channel's type, the status, and how long after it was due (null: at accept). */
export interface SettledMessage {
  type: string;
  status: MessageStatus;
  afterSeconds: number | null;
}

/** Told of what this node's transactions did to messages, once they committed (the metrics). */
export interface MessageCounts {
  /** Messages an accept stored, by their channel's type. */
  countAccepted(types: readonly string[]): void;
  /** Messages that reached their first final status. */
  countSettled(settled: readonly SettledMessage[]): void;
}

/**
 * Every consumer of message events, with the code that owns it, in the one order they run. Two belong to doors: their
 * code runs inside the core's accept, status and inbound transactions.
 */
export interface MessageEventConsumers {
  /** The legacy door (doors/legacy/callbacks.ts): a reply's legacy callback URL, on it before its webhook is written. */
  legacyReplyLink: EventConsumer;
  /** The webhook outbox (core/webhooks/outbox.ts): the webhook deliveries of each event. */
  webhooks: EventConsumer;
  /** RCS (core/rcs/service.ts): a user's MO opens a conversation, or joins the one running. */
  rcsConversation: EventConsumer;
  /** The SMPP door (doors/smpp/gateway.ts): receipts and MO for SMPP clients, into the SMPP outbox. */
  smppOutbox: EventConsumer;
}

/**
 * The consumers of committed message events, declared once by the composition root (src/app/). Accepts, status
 * changes and inbound messages all run the same list, in the order of {@link MessageEventConsumers}.
 */
export class EventConsumers {
  private list: readonly EventConsumer[] = [];
  private declared = false;
  private counts: MessageCounts | null = null;

  /** `afterCommit` runs a function once a transaction commits (never if it rolls back). */
  constructor(private readonly afterCommit: (tx: Db, run: () => void) => void = (_tx, run) => run()) {}

  /** Where the messages' counts go (once: the composition root). */
  countWith(counts: MessageCounts): void {
    this.counts = counts;
  }

  /** Whether anything counts messages: callers build the lists for {@link counted} only then. */
  get counting(): boolean {
    return this.counts !== null;
  }

  /** Counts what `tx` did, once it commits: messages accepted (their channel types) and messages settled. */
  counted(tx: Db, accepted: readonly string[], settled: readonly SettledMessage[]): void {
    const counts = this.counts;
    if (counts === null || (accepted.length === 0 && settled.length === 0)) return;
    this.afterCommit(tx, () => {
      if (accepted.length > 0) counts.countAccepted(accepted);
      if (settled.length > 0) counts.countSettled(settled);
    });
  }

  declare(consumers: MessageEventConsumers): void {
    if (this.declared) throw new Error('the event consumers are declared once, in the composition root');
    this.list = Object.freeze([consumers.legacyReplyLink, consumers.webhooks, consumers.rcsConversation, consumers.smppOutbox]);
    this.declared = true;
  }

  async run(tx: Db, events: MessageEventRow[], messages: Map<string, MessageRow>): Promise<void> {
    if (events.length === 0) return;
    for (const consume of this.list) await consume(tx, events, messages);
  }
}
