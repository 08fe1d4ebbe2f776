import type { Store } from './db.ts';
import { type MigrationState, readMigrationState } from './migrator.ts';

export type { AppliedMigration, MigrationState } from './migrator.ts';

/** The migrations the database has (with when each was applied), and those this version of Tern would still apply. */
export async function migrationStatus(store: Store): Promise<MigrationState> {
  return readMigrationState(store.db, store.schema);
}
