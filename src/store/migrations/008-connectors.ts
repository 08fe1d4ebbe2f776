import { type Kysely, sql } from 'kysely';
import { uuidv7 } from '../../domain/ids.ts';

const CHUNK = 500;

/**
 * Operator connections as data: the connectors and the routes that choose between them, the durable records a
 * connector keeps (pending receipts, timers), a lease on the SMPP outbox like the other queues, and the number of
 * times a message was placed with an operator. The default data reproduces the embedded setup: the simulator for
 * everything, its voice network for voice messages. The simulators' own tables become connector records.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('connectors')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('settings', 'text', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('routes')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('priority', 'integer', (c) => c.notNull())
    .addColumn('match', 'text', (c) => c.notNull())
    .addColumn('connectors', 'text', (c) => c.notNull())
    .addColumn('failover', 'text', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('connector_records')
    .addColumn('connector', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('due_at', 'bigint')
    .addColumn('lease_until', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('connector_records_pk', ['connector', 'key'])
    .execute();
  await db.schema.createIndex('connector_records_due').on('connector_records').columns(['due_at']).where(sql.ref('due_at'), 'is not', null).execute();

  await db.schema.alterTable('smpp_outbox').addColumn('lease_until', 'bigint').execute();
  await db.schema
    .alterTable('messages')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  // Messages on their way were placed once already.
  await sql`update messages set attempts = 1 where status = 'ENROUTE' and upstream_id is not null`.execute(db);

  const now = Date.now();
  const simulator = uuidv7(now);
  const voice = uuidv7(now);
  await db
    .insertInto('connectors')
    .values([
      { id: simulator, name: 'simulator', kind: 'SIMULATOR', settings: '{}', source: 'DEFAULT', enabled: 1, created_at: now, updated_at: now },
      { id: voice, name: 'simulator-voice', kind: 'SIMULATOR', settings: '{}', source: 'DEFAULT', enabled: 1, created_at: now, updated_at: now },
    ])
    .execute();
  await db
    .insertInto('routes')
    .values([
      {
        id: uuidv7(now),
        name: 'voice',
        priority: 10,
        match: JSON.stringify({ type: 'VOICE' }),
        connectors: JSON.stringify([{ connectorId: voice, weight: 1 }]),
        failover: '[]',
        source: 'DEFAULT',
        enabled: 1,
        created_at: now,
        updated_at: now,
      },
      {
        id: uuidv7(now),
        name: 'default',
        priority: 100,
        match: '{}',
        connectors: JSON.stringify([{ connectorId: simulator, weight: 1 }]),
        failover: '[]',
        source: 'DEFAULT',
        enabled: 1,
        created_at: now,
        updated_at: now,
      },
    ])
    .execute();

  await moveSimulatorState(db, now);
  await db.schema.dropTable('simulator_submissions').execute();
  await db.schema.dropTable('simulator_rcs_reads').execute();
  await db.schema.dropTable('simulator_calls').execute();
}

/** What the simulated networks still owed (receipts, read reports, call outcomes) becomes records of their connector. */
async function moveSimulatorState(db: Kysely<any>, now: number): Promise<void> {
  const records: Array<Record<string, unknown>> = [];
  const submissions = await db
    .selectFrom('simulator_submissions as s')
    .leftJoin('messages as m', 'm.id', 's.message_id')
    .select(['s.message_id', 's.upstream_id', 's.recipient', 's.accepted', 's.receipt_status', 's.receipt_due_at', 'm.type'])
    .where('s.emitted', '=', 0)
    .where('s.receipt_due_at', 'is not', null)
    .execute();
  for (const s of submissions) {
    records.push(
      record(
        'simulator',
        s.message_id,
        s.receipt_due_at,
        {
          type: s.type ?? 'SMS',
          upstreamId: s.upstream_id,
          recipient: s.recipient,
          accepted: s.accepted === 1,
          duplicates: 0,
          next: 'RECEIPT',
          status: s.receipt_status,
        },
        now,
      ),
    );
  }
  const reads = await db
    .selectFrom('simulator_rcs_reads as r')
    .innerJoin('messages as m', 'm.id', 'r.message_id')
    .select(['r.message_id', 'r.due_at', 'm.upstream_id', 'm.recipient'])
    .where('r.emitted', '=', 0)
    .execute();
  const pendingReceipt = new Set(submissions.map((s) => s.message_id));
  for (const r of reads) {
    if (pendingReceipt.has(r.message_id)) continue;
    records.push(
      record(
        'simulator',
        r.message_id,
        r.due_at,
        {
          type: 'RCS',
          upstreamId: r.upstream_id ?? '',
          recipient: r.recipient,
          accepted: true,
          duplicates: 0,
          next: 'READ',
        },
        now,
      ),
    );
  }
  const calls = await db.selectFrom('simulator_calls').selectAll().where('emitted', '=', 0).execute();
  const outcome: Record<string, { status: string; detail: string | null }> = {
    ANSWERED: { status: 'DELIVERED', detail: null },
    BUSY: { status: 'UNDELIVERED', detail: 'BUSY' },
    NO_ANSWER: { status: 'UNDELIVERED', detail: 'NO_ANSWER' },
    INVALID: { status: 'UNDELIVERABLE', detail: 'INVALID_PHONE_NUMBER' },
  };
  for (const c of calls) {
    const final = outcome[c.outcome] ?? outcome.ANSWERED!;
    records.push(
      record(
        'simulator-voice',
        c.message_id,
        c.next_at ?? now,
        {
          type: 'VOICE',
          upstreamId: c.upstream_id,
          recipient: c.recipient,
          accepted: true,
          duplicates: 0,
          next: 'RECEIPT',
          status: c.final_status ?? final.status,
          ...((c.final_detail ?? final.detail) ? { detail: c.final_detail ?? final.detail } : {}),
        },
        now,
      ),
    );
  }
  for (let i = 0; i < records.length; i += CHUNK) {
    await db
      .insertInto('connector_records')
      .values(records.slice(i, i + CHUNK))
      .execute();
  }
}

function record(connector: string, key: string, dueAt: number | null, data: object, now: number) {
  return { connector, key, data: JSON.stringify(data), due_at: dueAt === null ? null : Number(dueAt), lease_until: null, created_at: now };
}

export async function down(): Promise<void> {
  throw new Error('down migrations are not supported');
}
