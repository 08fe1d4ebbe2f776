import type { ChannelFlow, ChannelType } from '../domain/tenancy.ts';
import type { Db } from './db.ts';
import type { ChannelTable } from './schema.ts';

export interface Channel {
  id: string;
  organisationId: string;
  name: string;
  type: ChannelType;
  flow: ChannelFlow;
  defaultFromField: string | null;
  fromFieldList: string[];
  defaultCallbackUrlStatus: string | null;
  defaultCallbackUrlMo: string | null;
  dailyLimit: number | null;
  monthlyLimit: number | null;
  webhookSecret: string;
  webhookSecretPrevious: string | null;
  webhookSecretPreviousUntil: number | null;
  fallbackSmsChannelId: string | null;
  /** Long URLs in its SMS are replaced by tracked short links at accept. */
  shortLinks: boolean;
  state: string;
  createdAt: number;
}

export function toChannel(r: ChannelTable): Channel {
  return {
    id: r.id,
    organisationId: r.organisation_id,
    name: r.name,
    type: r.type as ChannelType,
    flow: r.flow as ChannelFlow,
    defaultFromField: r.default_from_field,
    fromFieldList: JSON.parse(r.from_field_list) as string[],
    defaultCallbackUrlStatus: r.default_callback_url_status,
    defaultCallbackUrlMo: r.default_callback_url_mo,
    dailyLimit: r.daily_limit,
    monthlyLimit: r.monthly_limit,
    webhookSecret: r.webhook_secret,
    webhookSecretPrevious: r.webhook_secret_previous,
    webhookSecretPreviousUntil: r.webhook_secret_previous_until,
    fallbackSmsChannelId: r.fallback_sms_channel_id,
    shortLinks: r.short_links === 1,
    state: r.state,
    createdAt: r.created_at,
  };
}

function toRow(c: Channel): ChannelTable {
  return {
    id: c.id,
    organisation_id: c.organisationId,
    name: c.name,
    type: c.type,
    flow: c.flow,
    default_from_field: c.defaultFromField,
    from_field_list: JSON.stringify(c.fromFieldList),
    default_callback_url_status: c.defaultCallbackUrlStatus,
    default_callback_url_mo: c.defaultCallbackUrlMo,
    daily_limit: c.dailyLimit,
    monthly_limit: c.monthlyLimit,
    webhook_secret: c.webhookSecret,
    webhook_secret_previous: c.webhookSecretPrevious,
    webhook_secret_previous_until: c.webhookSecretPreviousUntil,
    fallback_sms_channel_id: c.fallbackSmsChannelId,
    short_links: c.shortLinks ? 1 : 0,
    state: c.state,
    created_at: c.createdAt,
  };
}

export async function insertChannel(db: Db, c: Channel): Promise<void> {
  await db.insertInto('channels').values(toRow(c)).execute();
}

export async function saveChannel(db: Db, c: Channel): Promise<void> {
  const { id, ...rest } = toRow(c);
  await db.updateTable('channels').set(rest).where('id', '=', id).execute();
}

/** Channels whose webhook signing secrets are not sealed (`v1:…`): stored by older versions, or without a key. */
export async function channelsWithSecretsInClear(db: Db): Promise<Channel[]> {
  const rows = await db
    .selectFrom('channels')
    .selectAll()
    .where((eb) =>
      eb.or([
        eb('webhook_secret', 'not like', 'v1:%'),
        eb.and([eb('webhook_secret_previous', 'is not', null), eb('webhook_secret_previous', 'not like', 'v1:%')]),
      ]),
    )
    .execute();
  return rows.map(toChannel);
}

export async function findChannel(db: Db, id: string): Promise<Channel | null> {
  const row = await db.selectFrom('channels').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? toChannel(row) : null;
}

export async function listChannels(db: Db, organisationIds: string[]): Promise<Channel[]> {
  if (organisationIds.length === 0) return [];
  const rows = await db.selectFrom('channels').selectAll().where('organisation_id', 'in', organisationIds).orderBy('created_at').orderBy('id').execute();
  return rows.map(toChannel);
}

/** Every organisation that has at least one channel. */
export async function listChannelOrganisationIds(db: Db): Promise<string[]> {
  const rows = await db.selectFrom('channels').select('organisation_id').distinct().execute();
  return rows.map((r) => r.organisation_id);
}
