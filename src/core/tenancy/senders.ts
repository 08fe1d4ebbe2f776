/**
 * The sender registry: what an organisation may send from, in which countries, once the operator approved it. Every
 * send reads it through a cache; a change clears every node's copy (the `settings` signal).
 */
import { uuidv7 } from '../../domain/ids.ts';
import { checkCountry } from '../../domain/locale.ts';
import { type RegisteredSender, SENDER_STATUSES, type SenderStatus, senderKindOf, senderRefusal } from '../../domain/senders.ts';
import type { Channel } from '../../store/channels.ts';
import type { Store } from '../../store/db.ts';
import { deleteSender, findSender, insertSenderIfAbsent, listSenders, updateSender } from '../../store/senders.ts';
import { Cache } from '../cache.ts';
import { fail } from '../errors.ts';

/** Bounds how long a node serves a registry whose change signal it missed. */
const REGISTRY_CACHE_TTL_MS = 5_000;
const MAX_COUNTRIES = 250;

export interface SenderRequest {
  value: string;
  countries?: string[];
}

function checkedCountries(countries: string[] | undefined, field: string): string[] {
  if (countries === undefined) return [];
  if (countries.length > MAX_COUNTRIES) fail('INVALID_REQUEST', `at most ${MAX_COUNTRIES} countries`, field);
  const out = new Set<string>();
  for (const [i, c] of countries.entries()) {
    const checked = checkCountry(c);
    if (!checked.ok) fail('INVALID_REQUEST', checked.reason, `${field}[${i}]`);
    out.add(checked.value);
  }
  return [...out].sort();
}

function checkedStatus(status: string, field: string): SenderStatus {
  if (!(SENDER_STATUSES as readonly string[]).includes(status)) fail('INVALID_REQUEST', `must be one of ${SENDER_STATUSES.join(', ')}, got "${status}"`, field);
  return status as SenderStatus;
}

export class SenderRegistry {
  private readonly byOrganisation = new Cache<string, ReadonlyMap<string, RegisteredSender>>({ capacity: 100_000, ttlMs: REGISTRY_CACHE_TTL_MS });

  constructor(private readonly store: Store) {
    store.signals.on('settings', () => this.byOrganisation.clear());
  }

  private async changed(organisationId: string): Promise<void> {
    this.byOrganisation.delete(organisationId);
    await this.store.signals.raise(this.store.db, 'settings');
  }

  list(organisationId: string): Promise<RegisteredSender[]> {
    return listSenders(this.store.db, organisationId);
  }

  async get(organisationId: string, id: string): Promise<RegisteredSender> {
    const s = await findSender(this.store.db, id);
    if (!s || s.organisationId !== organisationId) fail('NOT_FOUND', `sender ${id} not found`);
    return s;
  }

  /** Registers a sender: PENDING when the organisation asks, any status when the operator does. */
  async register(organisationId: string, input: SenderRequest & { status?: string }, now = Date.now()): Promise<RegisteredSender> {
    const kind = senderKindOf(input.value);
    if (!kind.ok) fail('INVALID_SENDER', kind.reason, 'value');
    const sender: RegisteredSender = {
      id: uuidv7(now),
      organisationId,
      value: input.value,
      kind: kind.kind,
      countries: checkedCountries(input.countries, 'countries'),
      status: input.status === undefined ? 'PENDING' : checkedStatus(input.status, 'status'),
      createdAt: now,
      updatedAt: now,
    };
    if (!(await insertSenderIfAbsent(this.store.db, sender))) fail('CONFLICT', `sender "${input.value}" is already registered`, 'value');
    await this.changed(organisationId);
    return sender;
  }

  /** The operator's decision: a status, and the countries it holds for. */
  async decide(organisationId: string, id: string, patch: { status?: string; countries?: string[] }, now = Date.now()): Promise<RegisteredSender> {
    const status = patch.status === undefined ? undefined : checkedStatus(patch.status, 'status');
    const countries = patch.countries === undefined ? undefined : checkedCountries(patch.countries, 'countries');
    await this.get(organisationId, id);
    await updateSender(this.store.db, id, { status, countries, updatedAt: now });
    await this.changed(organisationId);
    return this.get(organisationId, id);
  }

  /**
   * Drops a registration: the sender is then as one never registered (a channel's fromFieldList alone decides; to
   * refuse it, reject it instead). Answers what was removed.
   */
  async remove(organisationId: string, id: string): Promise<RegisteredSender> {
    const s = await this.get(organisationId, id);
    await deleteSender(this.store.db, id);
    await this.changed(organisationId);
    return s;
  }

  /** A channel's fromFieldList names senders its organisation may use: those not registered yet become APPROVED. */
  async approveChannelSenders(organisationId: string, values: readonly string[], now = Date.now()): Promise<void> {
    let added = false;
    for (const value of new Set(values)) {
      const kind = senderKindOf(value);
      const sender: RegisteredSender = {
        id: uuidv7(now),
        organisationId,
        value,
        kind: kind.ok ? kind.kind : 'ALPHANUMERIC',
        countries: [],
        status: 'APPROVED',
        createdAt: now,
        updatedAt: now,
      };
      if (await insertSenderIfAbsent(this.store.db, sender)) added = true;
    }
    if (added) await this.changed(organisationId);
  }

  private registry(organisationId: string, now: number): Promise<ReadonlyMap<string, RegisteredSender>> {
    return this.byOrganisation.load(organisationId, async () => new Map((await listSenders(this.store.db, organisationId)).map((s) => [s.value, s])), now);
  }

  /**
   * Refuses an SMS sender that may not go to `country`: a registered sender must be APPROVED for it; one that is not
   * registered goes only on a channel without a fromFieldList, as before the registry.
   */
  async checkSms(channel: Channel, sender: string | null, country: string | null, field: string, now: number, anyCountry = false): Promise<void> {
    if (sender === null) return;
    const registered = (await this.registry(channel.organisationId, now)).get(sender);
    if (registered) {
      const refusal = senderRefusal(registered, country, anyCountry);
      if (refusal) fail('INVALID_SENDER', refusal, field);
    }
  }
}
