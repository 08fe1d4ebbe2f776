/**
 * The legacy operations on accounts rather than messages: sub-accounts (createSubAccount.do, deleteSubAccount.do),
 * API keys (/http/2.0/createAuthorisation.do) and the address book (addContact.do).
 */
import type { ContactService } from '../../core/contacts/service.ts';
import { CoreError, fail } from '../../core/errors.ts';
import type { Principal } from '../../core/tenancy/auth.ts';
import type { TenancyService } from '../../core/tenancy/service.ts';
import type { SubAccountService } from '../../core/tenancy/sub-accounts.ts';
import { formatLegacyDay, parseLegacyDay } from './dates.ts';
import { type LegacyParams, param } from './params.ts';

/** createAuthorisation.do's answer, as the smsmode libraries read it. */
export interface Authorisation {
  id: string;
  accessToken: string;
  /** `ddMMyyyy`. */
  creationDate: string;
  state: string;
  /** `ddMMyyyy`; empty: the key does not expire. */
  expiration: string;
  /** The account's login (a sub-account's), or its organisation's id: what `targetPseudo` takes. */
  account: string;
}

/** Runs `work`; a core error about a field comes out about the legacy parameter that carried it. */
async function asParameters<T>(names: Readonly<Record<string, string>>, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    // `groups[2]` is about the parameter of `groups`.
    if (err instanceof CoreError && err.field !== undefined) throw new CoreError(err.kind, err.reason, names[err.field.replace(/\[\d+\]/g, '')] ?? err.field);
    throw err;
  }
}

/** `date`: a date of birth, `ddMMyyyy`. */
function birthDate(params: LegacyParams): string | null {
  const raw = param(params, 'date');
  if (raw === undefined) return null;
  return parseLegacyDay(raw) ?? fail('INVALID_REQUEST', `date: "${raw}" must be a date written ddMMyyyy`);
}

export class LegacyAccounts {
  constructor(
    private readonly tenancy: TenancyService,
    private readonly subAccounts: SubAccountService,
    private readonly contacts: ContactService,
  ) {}

  /** `createSubAccount.do`: the new sub-account's organisation id. A login already taken is 41. */
  async createSubAccount(principal: Principal, params: LegacyParams): Promise<string> {
    const login = param(params, 'newPseudo') ?? fail('INVALID_REQUEST', 'newPseudo: is required');
    const password = params.newPass;
    if (password === undefined || password === '') fail('INVALID_REQUEST', 'newPass: is required');
    const contact = {
      lastName: param(params, 'nom'),
      firstName: param(params, 'prenom'),
      company: param(params, 'societe'),
      address: param(params, 'adresse'),
      city: param(params, 'ville'),
      postalCode: param(params, 'codePostal'),
      mobile: param(params, 'mobile'),
      phone: param(params, 'telephone'),
      fax: param(params, 'fax'),
      email: param(params, 'email'),
      birthDate: birthDate(params),
    };
    const names = {
      login: 'newPseudo',
      password: 'newPass',
      reference: 'reference',
      'contact.lastName': 'nom',
      'contact.firstName': 'prenom',
      'contact.company': 'societe',
      'contact.address': 'adresse',
      'contact.city': 'ville',
      'contact.postalCode': 'codePostal',
      'contact.mobile': 'mobile',
      'contact.phone': 'telephone',
      'contact.fax': 'fax',
      'contact.email': 'email',
      'contact.birthDate': 'date',
    };
    const created = await asParameters(names, () =>
      this.subAccounts.create(principal, { login, password, reference: param(params, 'reference') ?? null, contact }),
    );
    return created.organisation.id;
  }

  /** `deleteSubAccount.do`: the deleted sub-account's organisation id. An unknown login is 41. */
  async deleteSubAccount(principal: Principal, params: LegacyParams): Promise<string> {
    const login = param(params, 'pseudoToDelete') ?? fail('INVALID_REQUEST', 'pseudoToDelete: is required');
    const { organisationId } = await asParameters({ login: 'pseudoToDelete' }, () => this.subAccounts.delete(principal, login));
    return organisationId;
  }

  /** `createAuthorisation.do`: a new API key on the caller's channel, with the caller's roles. */
  async createAuthorisation(principal: Principal): Promise<Authorisation> {
    const { credential, value } = await this.tenancy.createCredential(principal.channel.id, {
      name: 'createAuthorisation.do',
      roles: principal.credential.roles,
    });
    const organisationId = principal.credential.organisationId;
    const { timeZone } = await this.tenancy.locale(organisationId);
    return {
      id: credential.id,
      accessToken: value,
      creationDate: formatLegacyDay(credential.createdAt, timeZone),
      state: credential.state,
      expiration: '',
      account: (await this.subAccounts.loginOf(organisationId)) ?? organisationId,
    };
  }

  /**
   * `addContact.do`: a contact of the organisation, in the `groupes` (created when missing). A number already in the
   * address book is updated and joins the groups. Answers its id, and whether it is new.
   */
  async addContact(principal: Principal, params: LegacyParams): Promise<{ id: string; created: boolean }> {
    const lastName = param(params, 'nom') ?? fail('INVALID_REQUEST', 'nom: is required');
    const mobile = param(params, 'mobile') ?? fail('INVALID_REQUEST', 'mobile: is required');
    const organisationId = principal.credential.organisationId;
    // National numbers are read as sends read `numero`: in the organisation's country, French when it has none.
    const defaultCountry = (await this.tenancy.locale(organisationId)).defaultCountry ?? 'FR';
    const groups = (param(params, 'groupes') ?? '').split(',').filter((g) => g.trim() !== '');
    const names = { mobile: 'mobile', lastName: 'nom', firstName: 'prenom', company: 'societe', other: 'other', birthDate: 'date', groups: 'groupes' };
    const { contact, created } = await asParameters(names, () =>
      this.contacts.add({
        organisationId,
        mobile,
        defaultCountry,
        lastName,
        firstName: param(params, 'prenom'),
        company: param(params, 'societe'),
        other: param(params, 'other'),
        birthDate: birthDate(params),
        groups,
      }),
    );
    return { id: contact.id, created };
  }
}
