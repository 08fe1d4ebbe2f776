import { optOutSettings } from '../../domain/opt-out.ts';
import { type Static, Type } from 'typebox';
import { present } from '../../domain/absent.ts';
import { iso } from '../../domain/dates.ts';
import { toEuros } from '../../domain/money.ts';
import type { Channel, Credential, LedgerEntry, Organisation } from '../../core/types.ts';
import type { Consumption } from '../../core/tenancy/service.ts';

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
  defaultFromField: Type.Optional(Type.String()),
  fromFieldList: Type.Array(Type.String()),
  defaultCallbackUrlStatus: Type.Optional(Type.String()),
  defaultCallbackUrlMo: Type.Optional(Type.String()),
  dailyConsumption: Type.Number(),
  dailyConsumptionLimit: Type.Optional(Type.Number({ description: 'Absent: no limit' })),
  monthlyConsumption: Type.Number(),
  monthlyConsumptionLimit: Type.Optional(Type.Number({ description: 'Absent: no limit' })),
  fallbackSmsChannelId: Type.Optional(Type.String()),
  shortLinks: Type.Boolean({ description: 'long URLs in its SMS are replaced by tracked short links' }),
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
    ...present('defaultFromField', c.defaultFromField),
    fromFieldList: c.fromFieldList,
    ...present('defaultCallbackUrlStatus', c.defaultCallbackUrlStatus),
    ...present('defaultCallbackUrlMo', c.defaultCallbackUrlMo),
    dailyConsumption: toEuros(consumption.daily),
    ...present('dailyConsumptionLimit', c.dailyLimit === null ? null : toEuros(c.dailyLimit)),
    monthlyConsumption: toEuros(consumption.monthly),
    ...present('monthlyConsumptionLimit', c.monthlyLimit === null ? null : toEuros(c.monthlyLimit)),
    ...present('fallbackSmsChannelId', c.fallbackSmsChannelId),
    shortLinks: c.shortLinks,
    state: c.state,
    creationDate: iso(c.createdAt),
    href: `${base}/commons/v1/channels/${c.id}`,
  };
}

export const OrganisationView = Type.Object({
  organisationId: Type.String(),
  name: Type.String(),
  parentOrganisationId: Type.Optional(Type.String()),
  balance: Type.Object({ amount: Type.Number(), currency: Type.String(), parentBilling: Type.Boolean() }),
  monthlyConsumption: Type.Number(),
  monthlyConsumptionLimit: Type.Optional(Type.Number({ description: 'Absent: no limit' })),
  state: Type.String(),
  defaultCountry: Type.Optional(Type.String({ description: 'Country of national numbers (ISO 3166 alpha-2); absent: international only' })),
  timeZone: Type.String({ description: 'Time zone of dates written without an offset' }),
  optOut: Type.Object(
    { shortCode: Type.String(), text: Type.String(), custom: Type.Boolean({ description: "false: the platform's" }) },
    { description: 'Where recipients send STOP, and the mention appended to marketing SMS to French numbers' },
  ),
  contentRetentionDays: Type.Optional(
    Type.Integer({ description: "Days its message texts are kept before they are erased; absent: the platform's (TERN_CONTENT_RETENTION_DAYS)" }),
  ),
  creationDate: Type.String(),
  href: Type.String(),
});

export function organisationView(o: Organisation, monthlyConsumption: number, base: string): Static<typeof OrganisationView> {
  return {
    organisationId: o.id,
    name: o.name,
    ...present('parentOrganisationId', o.parentId),
    balance: { amount: toEuros(o.balance), currency: o.currency, parentBilling: o.parentBilling },
    monthlyConsumption: toEuros(monthlyConsumption),
    ...present('monthlyConsumptionLimit', o.monthlyLimit === null ? null : toEuros(o.monthlyLimit)),
    state: o.state,
    ...present('defaultCountry', o.defaultCountry),
    timeZone: o.timeZone,
    optOut: { ...optOutSettings(o.optOutShortCode, o.optOutText), custom: o.optOutShortCode !== null || o.optOutText !== null },
    ...present('contentRetentionDays', o.contentRetentionDays),
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
  revocationDate: Type.Optional(Type.String()),
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
    ...present('revocationDate', c.revokedAt === null ? null : iso(c.revokedAt)),
  };
}

export const LedgerEntryView = Type.Object({
  entryId: Type.String(),
  organisationId: Type.String(),
  kind: Type.String(),
  amount: Type.Number(),
  balance: Type.Number({ description: 'Balance after this entry (running balance)' }),
  currency: Type.String(),
  reference: Type.Optional(Type.String()),
  description: Type.Optional(Type.String()),
  messageId: Type.Optional(Type.String()),
  transferId: Type.Optional(Type.String()),
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
    ...present('reference', e.reference),
    ...present('description', e.description),
    ...present('messageId', e.messageId),
    ...present('transferId', e.transferId),
    creationDate: iso(e.createdAt),
  };
}
