import type { Db } from './db.ts';
import type { QueueDefinition } from './queue.ts';
import type { LookupBatchTable } from './schema.ts';

export type LookupBatchRow = Omit<LookupBatchTable, 'attempts'> & { attempts: number };

/** Batch lookups waiting for a node to run them, claimed with a lease (a node that dies leaves them to another). */
export const LOOKUP_BATCH_QUEUE: QueueDefinition = {
  signal: 'lookup-batches',
  table: 'lookup_batches',
  keys: ['id'],
  due: 'due_at',
  lease: 'lease_until',
};

export async function insertLookupBatch(db: Db, row: Omit<LookupBatchRow, 'attempts' | 'lease_until'>): Promise<void> {
  await db
    .insertInto('lookup_batches')
    .values({ ...row, lease_until: null })
    .execute();
}

/** A batch run: gone with the webhook that answers it, in the same transaction. */
export async function deleteLookupBatch(db: Db, id: string): Promise<void> {
  await db.deleteFrom('lookup_batches').where('id', '=', id).execute();
}

/** A claimed batch counted as tried once more (its lease stays: it is tried again when that runs out). */
export async function countLookupBatchAttempt(db: Db, id: string): Promise<void> {
  await db
    .updateTable('lookup_batches')
    .set((eb) => ({ attempts: eb('attempts', '+', 1) }))
    .where('id', '=', id)
    .execute();
}

/** A batch given back to the queue, due at `at` (its lease dropped): any node may take it then. */
export async function retryLookupBatchAt(db: Db, id: string, at: number): Promise<void> {
  await db.updateTable('lookup_batches').set({ due_at: at, lease_until: null }).where('id', '=', id).execute();
}
