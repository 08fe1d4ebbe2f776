import type { Db } from '../../store/db.ts';
import { findMessageExtra, type MessageRow, updateMessageExtra } from '../../store/messages.ts';

/**
 * A message's `extra` fields (door-specific data shown in its object), read and written by event hooks inside the
 * transaction of the event: `tx` is the handle the hook was given.
 */

/** The id, campaign and extra fields of the message `id`, or null when there is none. */
export function originOf(tx: Db, id: string): Promise<Pick<MessageRow, 'id' | 'campaign_id' | 'extra'> | null> {
  return findMessageExtra(tx, id);
}

/** Replaces the extra fields (JSON text) of the message `id`. */
export function setExtra(tx: Db, id: string, extra: string | null): Promise<void> {
  return updateMessageExtra(tx, id, extra);
}
