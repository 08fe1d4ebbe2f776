import { withoutSecrets } from '../../domain/audit.ts';
import { uuidv7 } from '../../domain/ids.ts';
import { type AuditFilter, type AuditRow, insertAuditEntry, listAuditEntries, pruneAuditEntries } from '../../store/audit.ts';
import type { Store } from '../../store/db.ts';
import { uuidv7Floor } from '../../store/retention.ts';

export type { AuditFilter } from '../../store/audit.ts';

/** Who made a change: an API key, the operator key, or (once people sign in) a user. */
export interface AuditActor {
  type: 'KEY' | 'OPERATOR' | 'USER';
  id: string;
}

export interface AuditInput {
  at?: number;
  organisationId: string | null;
  actor: AuditActor;
  action: string;
  objectType: string;
  objectId: string | null;
  before: unknown;
  after: unknown;
  remoteAddress: string | null;
  requestId: string | null;
  interface: 'REST' | 'CONSOLE' | 'CLI';
}

export interface AuditEntry {
  id: string;
  at: number;
  organisationId: string | null;
  actor: AuditActor;
  action: string;
  object: { type: string; id: string | null };
  before: unknown;
  after: unknown;
  remoteAddress: string | null;
  requestId: string | null;
  interface: string;
}

const DAY_MS = 86_400_000;
const BATCH = 500;
const ROUND = 20_000;

function parsed(json: string | null): unknown {
  return json === null ? null : (JSON.parse(json) as unknown);
}

function entryOf(r: AuditRow): AuditEntry {
  return {
    id: r.id,
    at: r.at,
    organisationId: r.organisation_id,
    actor: { type: r.actor_type as AuditActor['type'], id: r.actor_id },
    action: r.action,
    object: { type: r.object_type, id: r.object_id },
    before: parsed(r.before_state),
    after: parsed(r.after_state),
    remoteAddress: r.remote_address,
    requestId: r.request_id,
    interface: r.interface,
  };
}

/**
 * The audit log: what was changed through the management interfaces, by whom, when and from where. Append-only
 * (entries are never changed; they go only past TERN_AUDIT_RETENTION_DAYS); states are kept without their secrets.
 */
export class AuditService {
  constructor(
    private readonly store: Store,
    private readonly settings: { retentionDays: number },
  ) {}

  async record(input: AuditInput): Promise<AuditEntry> {
    const at = input.at ?? Date.now();
    const row: AuditRow = {
      id: uuidv7(at),
      at,
      organisation_id: input.organisationId,
      actor_type: input.actor.type,
      actor_id: input.actor.id,
      action: input.action,
      object_type: input.objectType,
      object_id: input.objectId,
      before_state: input.before === null || input.before === undefined ? null : JSON.stringify(withoutSecrets(input.before)),
      after_state: input.after === null || input.after === undefined ? null : JSON.stringify(withoutSecrets(input.after)),
      remote_address: input.remoteAddress,
      request_id: input.requestId,
      interface: input.interface,
    };
    await insertAuditEntry(this.store.db, row);
    return entryOf(row);
  }

  /** Entries matching the filter, newest first. */
  async list(filter: AuditFilter, page: number, pageSize: number): Promise<AuditEntry[]> {
    return (await listAuditEntries(this.store.db, filter, (page - 1) * pageSize, pageSize)).map(entryOf);
  }

  /** Deletes entries past their retention, a batch at a time; returns how many went. */
  async prune(now: number): Promise<number> {
    const floor = uuidv7Floor(now - this.settings.retentionDays * DAY_MS);
    let total = 0;
    for (;;) {
      const n = await pruneAuditEntries(this.store.db, floor, BATCH);
      total += n;
      if (n < BATCH || total >= ROUND) return total;
    }
  }
}
