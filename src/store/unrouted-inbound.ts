import type { Db } from './db.ts';
import type { UnroutedInboundTable } from './schema.ts';

/** Inbound messages whose destination matched no channel (or whose sender was not a number), kept for operators. */

export type UnroutedInboundRow = UnroutedInboundTable;

export async function insertUnrouted(db: Db, rows: UnroutedInboundRow[]): Promise<void> {
  if (rows.length === 0) return;
  await db.insertInto('unrouted_inbound').values(rows).execute();
}

/** Newest first. */
export async function listUnrouted(db: Db, page: { offset: number; limit: number }): Promise<UnroutedInboundRow[]> {
  return db.selectFrom('unrouted_inbound').selectAll().orderBy('received_at', 'desc').offset(page.offset).limit(page.limit).execute();
}
