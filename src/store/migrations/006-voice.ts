import { type Kysely, PostgresAdapter } from 'kysely';

/** Rendered voice messages (the WAV a call plays) and the simulated voice network's calls. */
export async function up(db: Kysely<unknown>): Promise<void> {
  const binary = db.getExecutor().adapter instanceof PostgresAdapter ? 'bytea' : 'blob';
  await db.schema
    .createTable('voice_audio')
    .addColumn('message_id', 'text', (c) => c.primaryKey())
    .addColumn('wav', binary, (c) => c.notNull())
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('simulator_calls')
    .addColumn('message_id', 'text', (c) => c.primaryKey())
    .addColumn('upstream_id', 'text', (c) => c.notNull())
    .addColumn('recipient', 'text', (c) => c.notNull())
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('duplicate_submits', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_at', 'bigint')
    .addColumn('final_status', 'text')
    .addColumn('final_detail', 'text')
    .addColumn('emitted', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('ended_at', 'bigint')
    .execute();
  await db.schema.createIndex('simulator_calls_due').on('simulator_calls').columns(['emitted', 'next_at']).execute();
}

export async function down(): Promise<void> {
  throw new Error('down migrations are not supported');
}
