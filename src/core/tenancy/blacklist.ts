import type { Store } from '../../store/db.ts';
import { addToBlacklist, type BlacklistEntry, listBlacklist, removeFromBlacklist } from '../../store/blacklist.ts';
import { fail } from '../errors.ts';

export type { BlacklistEntry } from '../../store/blacklist.ts';

/**
 * An organisation's opt-out list as the API manages it: numbers are given already normalised (the door checks them
 * against its own field names). STOP and START replies change the same list (see InboundService).
 */
export class BlacklistService {
  constructor(private readonly store: Store) {}

  /** Newest first; `msisdn` narrows the list to that number. */
  list(organisationId: string, opts: { msisdn?: string; page: number; pageSize: number }): Promise<BlacklistEntry[]> {
    return listBlacklist(this.store.db, organisationId, {
      ...(opts.msisdn ? { msisdn: opts.msisdn } : {}),
      offset: (opts.page - 1) * opts.pageSize,
      limit: opts.pageSize,
    });
  }

  /** Adds the number (source API); a number already on the list is a conflict. */
  async add(organisationId: string, msisdn: string, now = Date.now()): Promise<BlacklistEntry> {
    const entry: BlacklistEntry = { organisation_id: organisationId, msisdn, source: 'API', created_at: now };
    if (!(await addToBlacklist(this.store.db, entry))) fail('CONFLICT', `${msisdn} is already blacklisted`);
    return entry;
  }

  /** Removes the number; one that is not on the list is not found. */
  async remove(organisationId: string, msisdn: string): Promise<void> {
    if (!(await removeFromBlacklist(this.store.db, organisationId, msisdn))) fail('NOT_FOUND', `${msisdn} is not blacklisted`);
  }
}
