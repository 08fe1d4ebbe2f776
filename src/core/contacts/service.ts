import { parseDay } from '../../domain/dates.ts';
import { uuidv7 } from '../../domain/ids.ts';
import type { CountryCode } from '../../domain/phone.ts';
import { inTransaction, type Store } from '../../store/db.ts';
import {
  addToGroups,
  type ContactRow,
  findContactByMsisdn,
  findGroups,
  groupMsisdns,
  groupNamesOf,
  insertContact,
  insertGroupIfMissing,
  updateContact,
} from '../../store/contacts.ts';
import { fail } from '../errors.ts';
import { normaliseRecipient } from '../messaging/prepare.ts';

export const MAX_NAME_LENGTH = 100;
export const MAX_GROUP_NAME_LENGTH = 100;
export const MAX_GROUPS_PER_CONTACT = 50;
export const MAX_OTHER_LENGTH = 500;

export interface ContactInput {
  organisationId: string;
  /** The contact's number; a national one is read in `defaultCountry`. */
  mobile: string;
  defaultCountry: CountryCode | null;
  lastName: string;
  firstName?: string | null;
  company?: string | null;
  other?: string | null;
  /** YYYY-MM-DD. */
  birthDate?: string | null;
  /** Groups the contact joins; missing ones are created. */
  groups?: string[];
}

export interface Contact {
  id: string;
  msisdn: string;
  lastName: string;
  firstName: string | null;
  company: string | null;
  other: string | null;
  birthDate: string | null;
  groups: string[];
}

function text(value: string | null | undefined, max: number, field: string): string | null {
  if (value === undefined || value === null) return null;
  const v = value.trim();
  if (v === '') return null;
  if (v.length > max) fail('INVALID_REQUEST', `at most ${max} characters`, field);
  return v;
}

/**
 * An organisation's address book: contacts, one per number, in named groups that a send can name instead of listing
 * numbers. Adding a number that is already there updates the contact and adds it to the groups.
 */
export class ContactService {
  constructor(private readonly store: Store) {}

  async add(input: ContactInput, now = Date.now()): Promise<{ contact: Contact; created: boolean }> {
    const msisdn = normaliseRecipient(input.mobile, 'mobile', input.defaultCountry);
    const lastName = text(input.lastName, MAX_NAME_LENGTH, 'lastName') ?? fail('INVALID_REQUEST', 'is required', 'lastName');
    const fields = {
      last_name: lastName,
      first_name: text(input.firstName, MAX_NAME_LENGTH, 'firstName'),
      company: text(input.company, MAX_NAME_LENGTH, 'company'),
      other: text(input.other, MAX_OTHER_LENGTH, 'other'),
      birth_date: input.birthDate ? (parseDay(input.birthDate) ?? fail('INVALID_REQUEST', 'must be a date written YYYY-MM-DD', 'birthDate')) : null,
    };
    const groups = [...new Set((input.groups ?? []).map((g, i) => text(g, MAX_GROUP_NAME_LENGTH, `groups[${i}]`)).filter((g): g is string => g !== null))];
    if (groups.length > MAX_GROUPS_PER_CONTACT) fail('INVALID_REQUEST', `at most ${MAX_GROUPS_PER_CONTACT} groups`, 'groups');

    const { id, created } = await inTransaction(this.store, async (trx) => {
      const row: ContactRow = { id: uuidv7(now), organisation_id: input.organisationId, msisdn, ...fields, created_at: now, updated_at: now };
      let contactId = row.id;
      const inserted = await insertContact(trx, row);
      if (!inserted) {
        const existing = (await findContactByMsisdn(trx, input.organisationId, msisdn))!;
        contactId = existing.id;
        await updateContact(trx, contactId, { ...fields, updated_at: now });
      }
      for (const name of groups) {
        await insertGroupIfMissing(trx, { id: uuidv7(now), organisation_id: input.organisationId, name, created_at: now });
      }
      await addToGroups(
        trx,
        contactId,
        (await findGroups(trx, input.organisationId, groups)).map((g) => g.id),
      );
      return { id: contactId, created: inserted };
    });
    const contact = (await findContactByMsisdn(this.store.db, input.organisationId, msisdn))!;
    return {
      created,
      contact: {
        id,
        msisdn,
        lastName: contact.last_name,
        firstName: contact.first_name,
        company: contact.company,
        other: contact.other,
        birthDate: contact.birth_date,
        groups: await groupNamesOf(this.store.db, id),
      },
    };
  }

  /** The numbers of a group's contacts (at most `limit`); NOT_FOUND when the organisation has no group of that name. */
  async groupNumbers(organisationId: string, name: string, limit: number): Promise<string[]> {
    const [group] = await findGroups(this.store.db, organisationId, [name.trim()]);
    if (!group) fail('NOT_FOUND', `no contact group named "${name.trim()}"`, 'groups');
    return groupMsisdns(this.store.db, group.id, limit);
  }
}
