import { createHash } from 'node:crypto';
import { canonicalJson } from '../domain/canonical-json.ts';
import type { Db, Store } from '../store/db.ts';
import {
  completeIdempotencyRow,
  deleteIdempotencyClaim,
  deleteIdempotencyKeysBefore,
  findIdempotencyRow,
  IN_PROGRESS,
  insertIdempotencyClaim,
  retakeIdempotencyRow,
} from '../store/idempotency-keys.ts';
import { fail } from './errors.ts';

/**
 * Idempotency-Key support for any request that changes state. A key is claimed (an in-progress row, visible to
 * concurrent retries) before the work starts; the answer is recorded in the work's own transaction, so either
 * both the effect and its answer exist, or neither does and the key is released for a retry.
 */

/** An answered key replays for this long; after it the key may be used for a new request. */
export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;
/**
 * An in-progress claim this old is taken over whoever holds it: its request is stuck, or died with a process that
 * left no trace of who it was (claims made before they recorded their process). A claim whose process is known to
 * be gone is taken over at once (see `Claimants`).
 */
export const IDEMPOTENCY_ABANDONED_MS = 60_000;

/**
 * Who holds the keys claimed here, and whether the holder of another claim is gone: the process that claimed a key
 * holds it for as long as it lives — its node's lease on the key ends when the node stops beating, or when it starts
 * again (a new process under the same node id) — and a retry takes a key whose holder is gone at once.
 */
export interface Claimants {
  /** This process, as recorded in the claims it makes. */
  readonly self: string;
  /** Whether the process that recorded `claimant` is gone (never true of `self`). */
  gone(claimant: string, now: number): Promise<boolean>;
}

export interface IdempotentRequest {
  /** Who the key belongs to and what it is for, e.g. `transfers:<organisationId>`. */
  scope: string;
  key: string;
  /** Hash of everything that makes the request what it is (see `requestFingerprint`). */
  fingerprint: string;
}

export interface IdempotentAnswer<T = unknown> {
  statusCode: number;
  body: T;
}

export type IdempotencyClaim = { state: 'claimed'; claimedAt: number } | { state: 'replay'; answer: IdempotentAnswer };

/** SHA-256 of the request's canonical JSON: key order and whitespace do not change it. */
export function requestFingerprint(request: unknown): string {
  return createHash('sha256').update(canonicalJson(request)).digest('hex');
}

/**
 * Claims `req.key` for this request, or says what to answer instead: the recorded answer when the same request
 * was already served, 422 `422.001` when the key came with another request, 409 `409.003` while it is in progress.
 */
export async function claimIdempotencyKey(db: Db, req: IdempotentRequest, now = Date.now(), claimants?: Claimants): Promise<IdempotencyClaim> {
  const claimant = claimants?.self ?? null;
  for (let attempt = 0; attempt < 5; attempt++) {
    if (await insertIdempotencyClaim(db, { scope: req.scope, key: req.key, requestHash: req.fingerprint, at: now, claimant })) {
      return { state: 'claimed', claimedAt: now };
    }
    const row = await findIdempotencyRow(db, req.scope, req.key);
    if (!row) continue; // released between our insert and our read
    const inProgress = row.status_code === IN_PROGRESS;
    const expired =
      now - row.created_at > (inProgress ? IDEMPOTENCY_ABANDONED_MS : IDEMPOTENCY_TTL_MS) ||
      (inProgress && row.claimed_by !== null && claimants !== undefined && row.claimed_by !== claimants.self && (await claimants.gone(row.claimed_by, now)));
    if (expired) {
      // By compare and set on the claim as read: the process that held it, if it was only stalled and comes back,
      // finds its claim gone and its answer is not recorded (its transaction fails), so the request runs once.
      if (await retakeIdempotencyRow(db, row, { requestHash: req.fingerprint, at: now, claimant })) {
        return { state: 'claimed', claimedAt: now };
      }
      continue;
    }
    if (row.request_hash !== req.fingerprint) {
      fail('IDEMPOTENCY_MISMATCH', `Idempotency-Key "${req.key}" was already used with a different request`);
    }
    if (inProgress) fail('IDEMPOTENCY_IN_PROGRESS', `a request with Idempotency-Key "${req.key}" is still being processed; retry later`);
    return { state: 'replay', answer: { statusCode: row.status_code, body: JSON.parse(row.response_body) as unknown } };
  }
  return fail('IDEMPOTENCY_IN_PROGRESS', `Idempotency-Key "${req.key}" is being claimed concurrently; retry later`);
}

/** Records the answer; call it inside the transaction that makes the request's effect. */
export async function completeIdempotencyKey(trx: Db, req: IdempotentRequest, claimedAt: number, answer: IdempotentAnswer): Promise<void> {
  const recorded = await completeIdempotencyRow(trx, req.scope, req.key, claimedAt, {
    statusCode: answer.statusCode,
    body: JSON.stringify(answer.body),
  });
  // Only when this request stalled past IDEMPOTENCY_ABANDONED_MS and a retry took the key over.
  if (!recorded) fail('IDEMPOTENCY_IN_PROGRESS', `Idempotency-Key "${req.key}" was taken over by a retry`);
}

/** Gives the key back after a failure, so a retry runs the request again. */
export async function releaseIdempotencyKey(db: Db, req: IdempotentRequest, claimedAt: number): Promise<void> {
  await deleteIdempotencyClaim(db, req.scope, req.key, claimedAt);
}

/** PostgreSQL's serialization failure and deadlock: the transaction did nothing and may simply run again. */
function isRetryable(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '40001' || code === '40P01';
}

const TRANSACTION_ATTEMPTS = 3;

/**
 * Runs `work` in a transaction, at most once per idempotency key: a retry of the same request gets the recorded
 * answer (`replayed: true`) and changes nothing. Without a key (`req` null) the work simply runs. A transaction
 * that PostgreSQL aborts as a deadlock or serialization failure is run again.
 */
export async function runIdempotent<T>(
  store: Store,
  req: IdempotentRequest | null,
  work: (trx: Db) => Promise<IdempotentAnswer<T>>,
  now = Date.now(),
  claimants?: Claimants,
): Promise<IdempotentAnswer<T> & { replayed: boolean }> {
  let claimedAt: number | null = null;
  if (req) {
    const claim = await claimIdempotencyKey(store.db, req, now, claimants);
    if (claim.state === 'replay') return { ...(claim.answer as IdempotentAnswer<T>), replayed: true };
    claimedAt = claim.claimedAt;
  }
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        const answer = await store.db.transaction().execute(async (trx) => {
          const a = await work(trx);
          if (req && claimedAt !== null) await completeIdempotencyKey(trx, req, claimedAt, a);
          return a;
        });
        return { ...answer, replayed: false };
      } catch (err) {
        if (attempt >= TRANSACTION_ATTEMPTS || !isRetryable(err)) throw err;
      }
    }
  } catch (err) {
    if (req && claimedAt !== null) await releaseIdempotencyKey(store.db, req, claimedAt);
    throw err;
  }
}

const PRUNE_BATCH = 500;

/**
 * Forgets keys past their replay window (an abandoned claim is older still), a small batch at a time so sends never
 * wait behind a long delete; returns how many went.
 */
export async function pruneIdempotencyKeys(store: Store, now = Date.now()): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await deleteIdempotencyKeysBefore(store.db, now - IDEMPOTENCY_TTL_MS, PRUNE_BATCH);
    total += n;
    if (n < PRUNE_BATCH) return total;
  }
}

/**
 * The idempotency keys of one store, for the doors: claim a key, record the answer inside the work's own
 * transaction (`complete` takes that transaction), give the key back after a failure, or all three at once.
 */
export class IdempotencyService {
  constructor(
    private readonly store: Store,
    /** Who holds claims (without: none is recorded, and a claim is taken over after IDEMPOTENCY_ABANDONED_MS). */
    private readonly claimants?: Claimants,
  ) {}

  /** See `claimIdempotencyKey`. */
  claim(req: IdempotentRequest, now = Date.now()): Promise<IdempotencyClaim> {
    return claimIdempotencyKey(this.store.db, req, now, this.claimants);
  }

  /** Records the answer; `trx` is the transaction that makes the request's effect. */
  complete(trx: Db, req: IdempotentRequest, claimedAt: number, answer: IdempotentAnswer): Promise<void> {
    return completeIdempotencyKey(trx, req, claimedAt, answer);
  }

  /** Gives the key back after a failure, so a retry runs the request again. */
  release(req: IdempotentRequest, claimedAt: number): Promise<void> {
    return releaseIdempotencyKey(this.store.db, req, claimedAt);
  }

  /** See `runIdempotent`. */
  runIdempotent<T>(
    req: IdempotentRequest | null,
    work: (trx: Db) => Promise<IdempotentAnswer<T>>,
    now = Date.now(),
  ): Promise<IdempotentAnswer<T> & { replayed: boolean }> {
    return runIdempotent(this.store, req, work, now, this.claimants);
  }

  /** See `pruneIdempotencyKeys`. */
  prune(now = Date.now()): Promise<number> {
    return pruneIdempotencyKeys(this.store, now);
  }
}
