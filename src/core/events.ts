import type { Db } from '../store/db.ts';
import type { MessageEventRow, MessageRow } from '../store/messages.ts';

/**
 * Something that must happen in the same transaction as a message event (an accept, a status change, an inbound
 * message): writing its webhook deliveries, its SMPP receipts, linking a reply to its conversation. It sees the
 * events and the messages as they are being committed.
 */
export type EventConsumer = (tx: Db, events: MessageEventRow[], messages: Map<string, MessageRow>) => Promise<void>;

/**
 * The consumers of committed message events, in the one order they run, declared once by the composition root
 * (src/app.ts). Accepts, status changes and inbound messages all run the same list.
 */
export class EventConsumers {
  private list: readonly EventConsumer[] = [];
  private declared = false;

  declare(consumers: readonly EventConsumer[]): void {
    if (this.declared) throw new Error('the event consumers are declared once, in the composition root');
    this.list = Object.freeze([...consumers]);
    this.declared = true;
  }

  async run(tx: Db, events: MessageEventRow[], messages: Map<string, MessageRow>): Promise<void> {
    if (events.length === 0) return;
    for (const consume of this.list) await consume(tx, events, messages);
  }
}
