import { uuidv7 } from '../../domain/ids.ts';
import { type Db, inTransaction, type Store } from '../../store/db.ts';
import {
  assemblyParts,
  concatUsage,
  credentialsWithExpiredParts,
  credentialsWithStrandedParts,
  deleteAssembly,
  insertConcatPart,
  lockConcatOwner,
  nextConcatSweep,
  retakeAssembly,
  storedMessageIds,
  strandedMessageIds,
  takeAssembly,
  takeExpiredParts,
  type SmppConcatAssemblyKey,
  type SmppConcatPartRow,
} from '../../store/smpp-concat.ts';
import { groupBy } from '../../domain/group-by.ts';

/** A part of a concatenated submit as received by any node. */
export interface ConcatPartInput {
  source: string;
  destination: string;
  ref: number;
  total: number;
  /** 1-based. */
  seq: number;
  /** User data without the UDH. */
  payload: Buffer;
  dataCoding: number;
  /** Kept with the part and given back with the whole message or its expiry. */
  meta: string;
  /** When the assembly gives up, if this part starts it. */
  expiresAt: number;
}

/** What one credential may have waiting, all its assemblies together. */
export interface ConcatBudget {
  maxParts: number;
  maxBytes: number;
}

/** A message made whole: its parts in order, `meta` part 1's. */
export interface WholeConcat {
  messageId: string;
  parts: Array<{ payload: Buffer; dataCoding: number }>;
  meta: string;
}

export type ConcatPartOutcome =
  | { kind: 'partial'; messageId: string }
  | { kind: 'duplicate'; messageId: string }
  /** The part's total disagrees with the parts already there. */
  | { kind: 'inconsistent'; messageId: string }
  /**
   * This part made the message whole: only one node ever gets this. The message is to be stored with its id
   * (`storedWith` in the storing transaction) or refused (`drop`).
   */
  | ({ kind: 'complete' } & WholeConcat)
  | { kind: 'over-budget'; parts: number; bytes: number }
  /** The credential no longer exists. */
  | { kind: 'gone' };

/** An assembly whose parts stopped arriving; `meta` is part 1's, or the first part's received. */
export interface ExpiredConcat {
  messageId: string;
  received: number;
  total: number;
  meta: string;
}

/** Credentials whose expired or stranded parts one sweep takes. */
const SWEEP_BATCH = 100;

/**
 * How long a message made whole may go unstored before another node stores it: far longer than storing takes, so
 * only a node that stopped (or failed to store it) loses it to another.
 */
export const CONCAT_STRANDED_AFTER_MS = 30_000;

/**
 * Reassembly of concatenated SMPP submits for the whole cluster: the parts of a message wait in the database, so a
 * customer may send them over binds on different nodes. Each part is one short transaction serialised with the
 * credential's other parts: the credential's budget is counted from the table, and exactly one transaction finds the
 * last missing part; it marks the parts taken, and its node stores the message with the id its parts were answered
 * with, deleting the parts in the same transaction. A message taken and still there after CONCAT_STRANDED_AFTER_MS
 * (its node stopped, or failed) is taken over by any node's sweep: deleted if stored meanwhile, else stored again —
 * a second store of the same id fails on the message's key, so the message is stored and charged once. Waiting
 * assemblies whose time ran out are deleted and handed to whichever node's sweep deletes them, under the same
 * serialisation, so a part never joins an assembly being expired.
 */
export class SmppConcatParts {
  constructor(
    private readonly store: Store,
    private readonly nodeId: string,
    private readonly strandedAfterMs = CONCAT_STRANDED_AFTER_MS,
  ) {}

  add(credentialId: string, part: ConcatPartInput, budget: ConcatBudget, now = Date.now()): Promise<ConcatPartOutcome> {
    const key: SmppConcatAssemblyKey = { credentialId, source: part.source, destination: part.destination, ref: part.ref };
    const newMessageId = uuidv7(now);
    return inTransaction(this.store, async (trx): Promise<ConcatPartOutcome> => {
      if (!(await lockConcatOwner(trx, this.store.dialect, credentialId))) return { kind: 'gone' };
      const usage = await concatUsage(trx, credentialId);
      if (usage.parts + 1 > budget.maxParts || usage.bytes + part.payload.length > budget.maxBytes) {
        return { kind: 'over-budget', ...usage };
      }
      const existing = await assemblyParts(trx, key);
      const first = existing[0];
      const messageId = first?.message_id ?? newMessageId;
      if (existing.some((p) => p.total !== part.total)) return { kind: 'inconsistent', messageId };
      if (existing.some((p) => p.seq === part.seq)) return { kind: 'duplicate', messageId };
      await insertConcatPart(trx, {
        credential_id: credentialId,
        source: part.source,
        destination: part.destination,
        ref: part.ref,
        total: part.total,
        seq: part.seq,
        message_id: messageId,
        payload: part.payload,
        data_coding: part.dataCoding,
        meta: part.meta,
        created_at: now,
        expires_at: first?.expires_at ?? part.expiresAt,
        taken_at: null,
        taken_by: null,
      });
      if (existing.length + 1 < part.total) return { kind: 'partial', messageId };
      return { kind: 'complete', ...whole(messageId, await takeAssembly(trx, credentialId, messageId, this.nodeId, now)) };
    });
  }

  /** What the transaction storing a whole message runs: its parts are done with once it commits. */
  storedWith(credentialId: string, messageId: string): (db: Db) => Promise<void> {
    return (db) => deleteAssembly(db, credentialId, messageId);
  }

  /** A whole message refused without being stored: its parts are deleted, with `alsoInTransaction` (e.g. a receipt). */
  drop(credentialId: string, messageId: string, alsoInTransaction?: (db: Db) => Promise<void>): Promise<void> {
    return inTransaction(this.store, async (trx) => {
      await deleteAssembly(trx, credentialId, messageId);
      await alsoInTransaction?.(trx);
    });
  }

  /** When parts are next due to be taken (their assembly's time ends, or a whole message would be stranded); null: none wait. */
  nextSweep(): Promise<number | null> {
    return nextConcatSweep(this.store.db, this.strandedAfterMs);
  }

  /** Takes assemblies whose time ran out (each is taken by one node only). */
  async takeExpired(now = Date.now()): Promise<ExpiredConcat[]> {
    const expired: ExpiredConcat[] = [];
    for (;;) {
      const owners = await credentialsWithExpiredParts(this.store.db, now, SWEEP_BATCH);
      for (const credentialId of owners) {
        const rows = await inTransaction(this.store, async (trx) => {
          await lockConcatOwner(trx, this.store.dialect, credentialId);
          return takeExpiredParts(trx, credentialId, now);
        });
        expired.push(...expiredAssemblies(rows));
      }
      if (owners.length < SWEEP_BATCH) return expired;
    }
  }

  /**
   * Takes over the whole messages that were taken too long ago and are still not stored (each by one node only,
   * until its own time runs out): to be stored with their id like any whole message. Those stored meanwhile only
   * lose their parts.
   */
  async takeStranded(now = Date.now()): Promise<WholeConcat[]> {
    const takenBefore = now - this.strandedAfterMs;
    const stranded: WholeConcat[] = [];
    for (;;) {
      const owners = await credentialsWithStrandedParts(this.store.db, takenBefore, SWEEP_BATCH);
      for (const credentialId of owners) {
        const messages = await inTransaction(this.store, async (trx) => {
          await lockConcatOwner(trx, this.store.dialect, credentialId);
          const ids = await strandedMessageIds(trx, credentialId, takenBefore);
          const stored = await storedMessageIds(trx, ids);
          const taken: WholeConcat[] = [];
          for (const messageId of ids) {
            if (stored.has(messageId)) await deleteAssembly(trx, credentialId, messageId);
            else taken.push(whole(messageId, await retakeAssembly(trx, credentialId, messageId, takenBefore, this.nodeId, now)));
          }
          return taken;
        });
        stranded.push(...messages);
      }
      if (owners.length < SWEEP_BATCH) return stranded;
    }
  }
}

function whole(messageId: string, rows: SmppConcatPartRow[]): WholeConcat {
  const parts = [...rows].sort((a, b) => a.seq - b.seq);
  const total = parts[0]?.total ?? 0;
  if (parts.length === 0 || parts.length !== total || parts.some((p, i) => p.seq !== i + 1)) {
    // Cannot happen while parts are serialised per credential; never submit a message with holes.
    throw new Error(`concatenated message ${messageId}: ${parts.length} of ${total} parts found when whole`);
  }
  return {
    messageId,
    parts: parts.map((p) => ({ payload: Buffer.from(p.payload), dataCoding: p.data_coding })),
    meta: parts[0]!.meta,
  };
}

function expiredAssemblies(rows: SmppConcatPartRow[]): ExpiredConcat[] {
  const byMessage = groupBy(rows, (r) => r.message_id);
  return [...byMessage.values()].map((parts) => {
    const first = parts.find((p) => p.seq === 1) ?? [...parts].sort((a, b) => a.created_at - b.created_at || a.seq - b.seq)[0]!;
    return { messageId: first.message_id, received: parts.length, total: first.total, meta: first.meta };
  });
}
