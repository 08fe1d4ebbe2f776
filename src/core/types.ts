/**
 * The entity types the doors and workers see. They never reach the store themselves: what they read and write goes
 * through the core, and the shapes they render come from here.
 */
import type { Db } from '../store/db.ts';

export type { Channel } from '../store/channels.ts';
export type { Credential } from '../store/credentials.ts';
export type { Claim } from '../store/dispatch.ts';
export type { LedgerEntry } from '../store/ledger.ts';
export type { MessageEventRow, MessageRow } from '../store/messages.ts';
export type { Organisation } from '../store/organisations.ts';
export type { SmppCredential, SmppOutboxRow } from '../store/smpp.ts';
export type { WebhookDeliveryTable as WebhookDelivery } from '../store/schema.ts';

/**
 * A handle on the database that the core hands to event hooks: the transaction of the change being written. Doors
 * pass it back to core functions and never query through it.
 */
export type Tx = Db;
