import { type Static, Type } from 'typebox';
import { iso, isoOrNull } from '../../core/domain/dates.ts';
import { toEuros } from '../../core/domain/money.ts';
import type { Channel, Credential, LedgerEntry, Organisation } from '../../core/types.ts';
import type { Consumption } from '../../core/tenancy/service.ts';
import { Nullable } from './schemas.ts';

export const ChannelRef = Type.Object({
  channelId: Type.String(),
  name: Type.String(),
  type: Type.String(),
  flow: Type.String(),
});

export const ChannelView = Type.Object({
  channelId: Type.String(),
  name: Type.String(),
  type: Type.String({ enum: ['SMS', 'RCS', 'VOICE'] }),
  flow: Type.String({ enum: ['TRANSACTIONAL', 'MARKETING', 'OTP'] }),
  organisationId: Type.String(),
  defaultFromField: Nullable(Type.String()),
  fromFieldList: Type.Array(Type.String()),
  defaultCallbackUrlStatus: Nullable(Type.String()),
  defaultCallbackUrlMo: Nullable(Type.String()),
  dailyConsumption: Type.Number(),
  dailyConsumptionLimit: Nullable(Type.Number()),
  monthlyConsumption: Type.Number(),
  monthlyConsumptionLimit: Nullable(Type.Number()),
  fallbackSmsChannelId: Nullable(Type.String()),
  state: Type.String(),
  creationDate: Type.String(),
  href: Type.String(),
});

export function channelRef(c: Channel): Static<typeof ChannelRef> {
  return { channelId: c.id, name: c.name, type: c.type, flow: c.flow };
}

export function channelView(c: Channel, consumption: Consumption, base: string): Static<typeof ChannelView> {
  return {
    channelId: c.id,
    name: c.name,
    type: c.type,
    flow: c.flow,
    organisationId: c.organisationId,
    defaultFromField: c.defaultFromField,
    fromFieldList: c.fromFieldList,
    defaultCallbackUrlStatus: c.defaultCallbackUrlStatus,
    defaultCallbackUrlMo: c.defaultCallbackUrlMo,
    dailyConsumption: toEuros(consumption.daily),
    dailyConsumptionLimit: c.dailyLimit === null ? null : toEuros(c.dailyLimit),
    monthlyConsumption: toEuros(consumption.monthly),
    monthlyConsumptionLimit: c.monthlyLimit === null ? null : toEuros(c.monthlyLimit),
    fallbackSmsChannelId: c.fallbackSmsChannelId,
    state: c.state,
    creationDate: iso(c.createdAt),
    href: `${base}/commons/v1/channels/${c.id}`,
  };
}

export const OrganisationView = Type.Object({
  organisationId: Type.String(),
  name: Type.String(),
  parentOrganisationId: Nullable(Type.String()),
  balance: Type.Object({ amount: Type.Number(), currency: Type.String(), parentBilling: Type.Boolean() }),
  monthlyConsumption: Type.Number(),
  monthlyConsumptionLimit: Nullable(Type.Number()),
  state: Type.String(),
  creationDate: Type.String(),
  href: Type.String(),
});

export function organisationView(o: Organisation, monthlyConsumption: number, base: string): Static<typeof OrganisationView> {
  return {
    organisationId: o.id,
    name: o.name,
    parentOrganisationId: o.parentId,
    balance: { amount: toEuros(o.balance), currency: o.currency, parentBilling: o.parentBilling },
    monthlyConsumption: toEuros(monthlyConsumption),
    monthlyConsumptionLimit: o.monthlyLimit === null ? null : toEuros(o.monthlyLimit),
    state: o.state,
    creationDate: iso(o.createdAt),
    href: `${base}/commons/v1/organisations/${o.id}`,
  };
}

export const CredentialView = Type.Object({
  credentialId: Type.String(),
  name: Type.String(),
  value: Type.Optional(Type.String({ description: 'The API key; returned only when the credential is created' })),
  keyPrefix: Type.String(),
  roles: Type.Array(Type.String()),
  state: Type.String(),
  channel: ChannelRef,
  organisationId: Type.String(),
  creationDate: Type.String(),
  revocationDate: Nullable(Type.String()),
});

export function credentialView(c: Credential, channel: Channel, value?: string): Static<typeof CredentialView> {
  return {
    credentialId: c.id,
    name: c.name,
    ...(value !== undefined ? { value } : {}),
    keyPrefix: c.keyPrefix,
    roles: c.roles,
    state: c.state,
    channel: channelRef(channel),
    organisationId: c.organisationId,
    creationDate: iso(c.createdAt),
    revocationDate: isoOrNull(c.revokedAt),
  };
}

export const LedgerEntryView = Type.Object({
  entryId: Type.String(),
  organisationId: Type.String(),
  kind: Type.String(),
  amount: Type.Number(),
  balance: Type.Number({ description: 'Balance after this entry (running balance)' }),
  currency: Type.String(),
  reference: Nullable(Type.String()),
  description: Nullable(Type.String()),
  messageId: Nullable(Type.String()),
  transferId: Nullable(Type.String()),
  creationDate: Type.String(),
});

export function ledgerEntryView(e: LedgerEntry): Static<typeof LedgerEntryView> {
  return {
    entryId: e.id,
    organisationId: e.organisationId,
    kind: e.kind,
    amount: toEuros(e.amount),
    balance: toEuros(e.balanceAfter),
    currency: 'EUR',
    reference: e.reference,
    description: e.description,
    messageId: e.messageId,
    transferId: e.transferId,
    creationDate: iso(e.createdAt),
  };
}

