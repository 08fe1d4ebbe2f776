import { uuidv7 } from '../../domain/ids.ts';
import { parseEuros, toEuros } from '../../domain/money.ts';
import { MAX_TRANSFER_MICROS, type OrganisationNode, transferDecision } from '../../domain/transfer-rules.ts';
import type { Db, Store } from '../../store/db.ts';
import { applyBalanceChange, type LedgerEntry, listLedger } from '../../store/ledger.ts';
import { findOrganisation, listOrganisations, lockOrganisationRows, type Organisation } from '../../store/organisations.ts';
import { findTransfer, insertTransfer, listTransfers, type TransferFilter, type TransferRecord } from '../../store/transfers.ts';
import { fail } from '../errors.ts';
import { IdempotencyService, type IdempotentAnswer, type IdempotentRequest, requestFingerprint } from '../idempotency.ts';

export interface OrganisationName {
  organisationId: string;
  name: string;
}

export interface Transfer extends TransferRecord {
  source: OrganisationName;
  destination: OrganisationName;
}

export interface TransferRequest {
  /** The organisation of the ADMIN key asking. */
  callerOrganisationId: string;
  credentialId: string | null;
  sourceId: string;
  destinationId: string;
  /** Micro-euros (see `transferAmount`). */
  amount: number;
  reference: string | null;
  description: string | null;
  /** The request's Idempotency-Key, if any. */
  idempotencyKey: string | null;
}

/** A transfer amount from a request: positive decimal euros with at most 6 decimals, as micro-euros (400.006 otherwise). */
export function transferAmount(value: unknown, field = 'amount'): number {
  const parsed = parseEuros(value, { maxDecimals: 6 });
  if (!parsed.ok) fail('INVALID_AMOUNT', parsed.reason, field);
  if (parsed.micros > MAX_TRANSFER_MICROS) fail('INVALID_AMOUNT', `must be at most ${toEuros(MAX_TRANSFER_MICROS)}`, field);
  return parsed.micros;
}

/**
 * The idempotency scope and fingerprint of a transfer request: keys belong to the caller's organisation, and the
 * request is what it moves (amounts compared in micro-euros, so 10 and "10.00" are the same request).
 */
export function transferIdempotency(req: Omit<TransferRequest, 'idempotencyKey' | 'credentialId'>, key: string): IdempotentRequest {
  return {
    scope: `transfers:${req.callerOrganisationId}`,
    key,
    fingerprint: requestFingerprint({
      sourceId: req.sourceId,
      destinationId: req.destinationId,
      amount: req.amount,
      reference: req.reference,
      description: req.description,
    }),
  };
}

const nameOf = (o: Organisation): OrganisationName => ({ organisationId: o.id, name: o.name });

/** Balances as the ledger tells them, and transfers of funds between an organisation and its sub-organisations. */
export class FundsService {
  constructor(
    private readonly store: Store,
    private readonly idempotency = new IdempotencyService(store),
  ) {}

  private get db(): Db {
    return this.store.db;
  }

  /**
   * Whether `org` is the caller's organisation, one of its descendants, or its parent: the organisations a
   * caller may name in a transfer. Others answer 404 as if they did not exist.
   */
  private async visibleTo(org: Organisation, caller: Organisation): Promise<boolean> {
    if (org.id === caller.parentId) return true;
    let current: Organisation | null = org;
    for (let depth = 0; current && depth < 64; depth++) {
      if (current.id === caller.id) return true;
      current = current.parentId ? await findOrganisation(this.db, current.parentId) : null;
    }
    return false;
  }

  private async visibleOrganisation(caller: Organisation, id: string, role: string): Promise<Organisation> {
    const org = await findOrganisation(this.db, id);
    if (!org || !(await this.visibleTo(org, caller))) fail('NOT_FOUND', `${role} organisation ${id} not found`);
    return org;
  }

  /**
   * Moves funds from the source to the destination in one transaction: a TRANSFER_OUT and a TRANSFER_IN ledger
   * row and the transfer record. The source never goes below zero whatever the concurrency (409.002); both rows
   * are locked in id order first, so opposite transfers cannot deadlock on PostgreSQL. With an Idempotency-Key,
   * a retry gets the first answer and moves nothing. `answer` renders the HTTP answer that a retry replays.
   */
  async transfer<T>(
    req: TransferRequest,
    answer: (t: Transfer) => IdempotentAnswer<T>,
    now = Date.now(),
  ): Promise<IdempotentAnswer<T> & { replayed: boolean }> {
    const caller = await findOrganisation(this.db, req.callerOrganisationId);
    if (!caller) return fail('NOT_FOUND', `organisation ${req.callerOrganisationId} not found`);
    const source = await this.visibleOrganisation(caller, req.sourceId, 'source');
    const destination = await this.visibleOrganisation(caller, req.destinationId, 'destination');
    const node = (o: Organisation): OrganisationNode => ({ id: o.id, parentId: o.parentId });
    const decision = transferDecision(caller.id, node(source), node(destination));
    if (!decision.allowed) fail('FORBIDDEN_TRANSFER', decision.reason);
    if (source.currency !== destination.currency) {
      fail('FORBIDDEN_TRANSFER', `the organisations keep their balances in different currencies (${source.currency}, ${destination.currency})`);
    }

    const idempotency = req.idempotencyKey ? transferIdempotency(req, req.idempotencyKey) : null;

    return this.idempotency.runIdempotent(
      idempotency,
      async (trx) => {
        const transfer: Transfer = {
          id: uuidv7(now),
          sourceId: source.id,
          destinationId: destination.id,
          amount: req.amount,
          currency: source.currency,
          reference: req.reference,
          description: req.description,
          credentialId: req.credentialId,
          createdAt: now,
          source: nameOf(source),
          destination: nameOf(destination),
        };
        await this.lockOrganisations(trx, [source.id, destination.id]);
        const debit = await applyBalanceChange(trx, {
          organisationId: source.id,
          amount: -req.amount,
          kind: 'TRANSFER_OUT',
          reference: req.reference,
          description: req.description ?? `Transfer to ${destination.name}`,
          transferId: transfer.id,
          at: now,
        });
        if (!debit) {
          fail('INSUFFICIENT_FUNDS', `the balance of organisation ${source.id} is lower than ${toEuros(req.amount)} ${source.currency}`);
        }
        const credit = await applyBalanceChange(trx, {
          organisationId: destination.id,
          amount: req.amount,
          kind: 'TRANSFER_IN',
          reference: req.reference,
          description: req.description ?? `Transfer from ${source.name}`,
          transferId: transfer.id,
          at: now,
        });
        if (!credit) fail('NOT_FOUND', `destination organisation ${destination.id} not found`);
        await insertTransfer(trx, transfer);
        return answer(transfer);
      },
      now,
    );
  }

  /**
   * Row locks in a fixed (id) order on PostgreSQL; SQLite's single writer already serialises transactions. NO KEY
   * UPDATE is the lock the balance UPDATE takes anyway: unlike FOR UPDATE it lets foreign-key checks (KEY SHARE)
   * through, such as the parent_id check PostgreSQL makes when another transaction updates a sub-organisation's
   * row for the second time.
   */
  private async lockOrganisations(trx: Db, ids: string[]): Promise<void> {
    if (this.store.dialect !== 'postgres') return;
    await lockOrganisationRows(trx, ids);
  }

  private async withNames(records: TransferRecord[]): Promise<Transfer[]> {
    const ids = [...new Set(records.flatMap((r) => [r.sourceId, r.destinationId]))];
    const orgs = new Map((await listOrganisations(this.db, { ids, offset: 0, limit: ids.length })).map((o) => [o.id, o]));
    const name = (id: string): OrganisationName => ({ organisationId: id, name: orgs.get(id)?.name ?? '' });
    return records.map((r) => ({ ...r, source: name(r.sourceId), destination: name(r.destinationId) }));
  }

  /** A transfer from or to `organisationId`; 404 for any other. */
  async getTransfer(organisationId: string, transferId: string): Promise<Transfer> {
    const record = await findTransfer(this.db, transferId);
    if (!record || (record.sourceId !== organisationId && record.destinationId !== organisationId)) {
      fail('NOT_FOUND', `transfer ${transferId} not found`);
    }
    return (await this.withNames([record]))[0]!;
  }

  /** Transfers from or to an organisation, newest first. */
  async listTransfers(filter: TransferFilter): Promise<Transfer[]> {
    return this.withNames(await listTransfers(this.db, filter));
  }

  /** Ledger rows of an organisation with the balance after each, newest first. */
  listLedger(organisationId: string, opts: { offset: number; limit: number; from?: number; to?: number }): Promise<LedgerEntry[]> {
    return listLedger(this.db, organisationId, opts);
  }
}
