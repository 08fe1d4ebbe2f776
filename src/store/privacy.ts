import { erasedBodyJson, erasedMessageObjectJson } from '../domain/privacy.ts';
import { type Db, inTransaction, type Store } from './db.ts';
import type { ContactTable, MessageTable } from './schema.ts';

/**
 * Erasing personal data while keeping what accounting needs: message rows stay (price, status, parts, consumption),
 * their content goes; an erased number is replaced by a stand-in. Every step is one short transaction over a small
 * batch, so a large erasure never holds the writer for long.
 */

/** The channels whose message texts have a retention, and its days. */
export async function channelsWithContentRetention(db: Db, platformDays: number | null): Promise<Array<{ channelId: string; days: number }>> {
  let q = db
    .selectFrom('channels')
    .innerJoin('organisations', 'organisations.id', 'channels.organisation_id')
    .select(['channels.id as channel_id', 'organisations.content_retention_days as days']);
  if (platformDays === null) q = q.where('organisations.content_retention_days', 'is not', null);
  const rows = await q.orderBy('channels.id').execute();
  return rows.map((r) => ({ channelId: r.channel_id, days: r.days ?? platformDays! }));
}

/** Erases the content of these messages (those not erased yet), with their webhook bodies, recordings and links. */
async function eraseContentOf(trx: Db, rows: Array<Pick<MessageTable, 'id' | 'body' | 'content_erased_at'>>, now: number): Promise<void> {
  const fresh = rows.filter((r) => r.content_erased_at === null);
  if (fresh.length === 0) return;
  const byBody = new Map<string, string[]>();
  for (const r of fresh) {
    const body = erasedBodyJson(r.body);
    byBody.set(body, [...(byBody.get(body) ?? []), r.id]);
  }
  for (const [body, ids] of byBody) await trx.updateTable('messages').set({ body, content_erased_at: now }).where('id', 'in', ids).execute();
  const ids = fresh.map((r) => r.id);
  await rewriteWebhookBodies(trx, ids, (payload) => erasedMessageObjectJson(payload, new Date(now).toISOString()));
  await trx.deleteFrom('voice_audio').where('message_id', 'in', ids).execute();
  await trx.updateTable('short_links').set({ url: '' }).where('message_id', 'in', ids).execute();
}

async function rewriteWebhookBodies(trx: Db, messageIds: string[], rewrite: (payload: string) => string): Promise<number> {
  const deliveries = await trx.selectFrom('webhook_deliveries').select(['id', 'payload']).where('message_id', 'in', messageIds).execute();
  for (const d of deliveries) {
    const payload = rewrite(d.payload);
    if (payload !== d.payload) await trx.updateTable('webhook_deliveries').set({ payload }).where('id', '=', d.id).execute();
  }
  return deliveries.length;
}

/**
 * One batch of the content retention of a channel's messages of one direction: erases up to `limit` messages
 * accepted before `before` (those still waiting to be sent are left, and hold the channel's cursor until they go).
 * Returns how many were erased and whether more may be due.
 */
export async function eraseContentBatch(
  store: Store,
  channelId: string,
  direction: 'MT' | 'MO',
  before: number,
  limit: number,
  now: number,
): Promise<{ erased: number; more: boolean }> {
  return inTransaction(store, async (trx) => {
    const cursor = await trx
      .selectFrom('content_retention_cursors')
      .select('through_at')
      .where('channel_id', '=', channelId)
      .where('direction', '=', direction)
      .executeTakeFirst();
    const from = cursor?.through_at ?? 0;
    if (from >= before) return { erased: 0, more: false };
    const rows = await trx
      .selectFrom('messages')
      .select(['id', 'body', 'accepted_at', 'content_erased_at'])
      .where('channel_id', '=', channelId)
      .where('direction', '=', direction)
      .where('accepted_at', '>=', from)
      .where('accepted_at', '<', before)
      .where('content_erased_at', 'is', null)
      .orderBy('accepted_at')
      .orderBy('id')
      .limit(limit)
      .execute();
    const waiting =
      rows.length === 0
        ? new Set<string>()
        : new Set(
            (
              await trx
                .selectFrom('dispatch_queue')
                .select('message_id')
                .where(
                  'message_id',
                  'in',
                  rows.map((r) => r.id),
                )
                .execute()
            ).map((r) => r.message_id),
          );
    await eraseContentOf(
      trx,
      rows.filter((r) => !waiting.has(r.id)),
      now,
    );
    const firstWaiting = rows.find((r) => waiting.has(r.id));
    const full = rows.length === limit;
    const through = firstWaiting ? firstWaiting.accepted_at : full ? rows[rows.length - 1]!.accepted_at : before;
    if (through > from) {
      await trx
        .insertInto('content_retention_cursors')
        .values({ channel_id: channelId, direction, through_at: through })
        .onConflict((oc) => oc.columns(['channel_id', 'direction']).doUpdateSet({ through_at: through }))
        .execute();
    }
    return { erased: rows.length - waiting.size, more: full && !firstWaiting };
  });
}

/** What an erasure did, table by table (rows changed or deleted). */
export interface ErasureCounts {
  messages: number;
  inboundMessages: number;
  messagesWaiting: number;
  webhookDeliveries: number;
  contacts: number;
  contactGroupMemberships: number;
  optOuts: number;
  oneTimePasswords: number;
  oneTimePasswordSends: number;
  rcsConversations: number;
}

export function noErasure(): ErasureCounts {
  return {
    messages: 0,
    inboundMessages: 0,
    messagesWaiting: 0,
    webhookDeliveries: 0,
    contacts: 0,
    contactGroupMemberships: 0,
    optOuts: 0,
    oneTimePasswords: 0,
    oneTimePasswordSends: 0,
    rcsConversations: 0,
  };
}

const count = (r: { numUpdatedRows?: bigint; numDeletedRows?: bigint }) => Number(r.numUpdatedRows ?? r.numDeletedRows ?? 0n);

/**
 * One batch of the erasure of a number's outbound messages in an organisation: up to `limit` of them get their
 * content erased and their recipient replaced by `standIn`. Messages still waiting to be sent are left (counted
 * apart). Returns what it changed; an empty batch means it is done.
 */
export async function eraseOutboundBatch(
  store: Store,
  organisationId: string,
  msisdn: string,
  standIn: string,
  limit: number,
  now: number,
): Promise<{ messages: number; webhookDeliveries: number }> {
  return inTransaction(store, async (trx) => {
    const rows = await trx
      .selectFrom('messages')
      .select(['id', 'body', 'content_erased_at'])
      .where('organisation_id', '=', organisationId)
      .where('recipient', '=', msisdn)
      .where('direction', '=', 'MT')
      .where((eb) => eb.not(eb.exists(eb.selectFrom('dispatch_queue').select('message_id').whereRef('dispatch_queue.message_id', '=', 'messages.id'))))
      .orderBy('id')
      .limit(limit)
      .execute();
    return eraseNumberOf(trx, rows, 'recipient', msisdn, standIn, now);
  });
}

/** The same for the inbound (MO) messages the number sent to one of the organisation's channels. */
export async function eraseInboundBatch(
  store: Store,
  channelId: string,
  msisdn: string,
  standIn: string,
  limit: number,
  now: number,
): Promise<{ messages: number; webhookDeliveries: number }> {
  return inTransaction(store, async (trx) => {
    const rows = await trx
      .selectFrom('messages')
      .select(['id', 'body', 'content_erased_at'])
      .where('channel_id', '=', channelId)
      .where('direction', '=', 'MO')
      .where('sender', '=', msisdn)
      .orderBy('id')
      .limit(limit)
      .execute();
    return eraseNumberOf(trx, rows, 'sender', msisdn, standIn, now);
  });
}

async function eraseNumberOf(
  trx: Db,
  rows: Array<Pick<MessageTable, 'id' | 'body' | 'content_erased_at'>>,
  column: 'recipient' | 'sender',
  msisdn: string,
  standIn: string,
  now: number,
): Promise<{ messages: number; webhookDeliveries: number }> {
  if (rows.length === 0) return { messages: 0, webhookDeliveries: 0 };
  const ids = rows.map((r) => r.id);
  await eraseContentOf(trx, rows, now);
  // Bodies already erased by the content retention still name the number: the stand-in goes there too.
  const at = new Date(now).toISOString();
  const webhookDeliveries = await rewriteWebhookBodies(trx, ids, (payload) => erasedMessageObjectJson(payload, at, { msisdn, standIn }));
  await trx
    .updateTable('messages')
    .set({ [column]: standIn })
    .where('id', 'in', ids)
    .execute();
  return { messages: rows.length, webhookDeliveries };
}

/** The organisation's channel ids (inbound messages are found channel by channel, through their index). */
export async function organisationChannelIds(db: Db, organisationId: string): Promise<string[]> {
  return (await db.selectFrom('channels').select('id').where('organisation_id', '=', organisationId).orderBy('id').execute()).map((r) => r.id);
}

/**
 * The rest of a number's data in an organisation, in one transaction (a handful of rows): its contacts deleted with
 * their group memberships, its opt-out kept with its details reset (`keepOptOut`, so it is still honoured) or
 * deleted, its one-time passwords and RCS conversations given the stand-in.
 */
export async function eraseNumberDetails(
  store: Store,
  organisationId: string,
  msisdn: string,
  standIn: string,
  keepOptOut: boolean,
  now: number,
): Promise<Pick<ErasureCounts, 'contacts' | 'contactGroupMemberships' | 'optOuts' | 'oneTimePasswords' | 'oneTimePasswordSends' | 'rcsConversations'>> {
  return inTransaction(store, async (trx) => {
    const contactIds = (await trx.selectFrom('contacts').select('id').where('organisation_id', '=', organisationId).where('msisdn', '=', msisdn).execute()).map(
      (r) => r.id,
    );
    let contactGroupMemberships = 0;
    if (contactIds.length > 0) {
      contactGroupMemberships = count(await trx.deleteFrom('contact_group_members').where('contact_id', 'in', contactIds).executeTakeFirst());
      await trx.deleteFrom('contacts').where('id', 'in', contactIds).execute();
    }
    const optOuts = count(
      keepOptOut
        ? await trx
            .updateTable('blacklist')
            .set({ source: 'ERASURE', created_at: now })
            .where('organisation_id', '=', organisationId)
            .where('msisdn', '=', msisdn)
            .executeTakeFirst()
        : await trx.deleteFrom('blacklist').where('organisation_id', '=', organisationId).where('msisdn', '=', msisdn).executeTakeFirst(),
    );
    const oneTimePasswords = count(
      await trx
        .updateTable('otps')
        .set({ recipient: standIn })
        .where('organisation_id', '=', organisationId)
        .where('recipient', '=', msisdn)
        .executeTakeFirst(),
    );
    const oneTimePasswordSends = count(
      await trx
        .updateTable('otp_sends')
        .set({ recipient: standIn })
        .where('organisation_id', '=', organisationId)
        .where('recipient', '=', msisdn)
        .executeTakeFirst(),
    );
    await trx.deleteFrom('otp_recipients').where('organisation_id', '=', organisationId).where('recipient', '=', msisdn).execute();
    const rcsConversations = count(
      await trx
        .updateTable('rcs_conversations')
        .set({ msisdn: standIn })
        .where('organisation_id', '=', organisationId)
        .where('msisdn', '=', msisdn)
        .executeTakeFirst(),
    );
    return { contacts: contactIds.length, contactGroupMemberships, optOuts, oneTimePasswords, oneTimePasswordSends, rcsConversations };
  });
}

/** What the organisation keeps about a number, for its export: messages either way (at most `limit`), contacts, opt-out. */
export async function numberData(
  db: Db,
  organisationId: string,
  channelIds: string[],
  msisdn: string,
  limit: number,
): Promise<{
  messages: MessageTable[];
  contacts: Array<ContactTable & { groups: string[] }>;
  optOut: { source: string; created_at: number } | null;
}> {
  const outbound = await db
    .selectFrom('messages')
    .selectAll()
    .where('organisation_id', '=', organisationId)
    .where('recipient', '=', msisdn)
    .orderBy('id')
    .limit(limit + 1)
    .execute();
  const inbound =
    channelIds.length === 0
      ? []
      : await db
          .selectFrom('messages')
          .selectAll()
          .where('channel_id', 'in', channelIds)
          .where('direction', '=', 'MO')
          .where('sender', '=', msisdn)
          .orderBy('id')
          .limit(limit + 1)
          .execute();
  const messages = [...outbound, ...inbound].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const contactRows = await db.selectFrom('contacts').selectAll().where('organisation_id', '=', organisationId).where('msisdn', '=', msisdn).execute();
  const contacts = [];
  for (const c of contactRows) {
    const groups = await db
      .selectFrom('contact_group_members')
      .innerJoin('contact_groups', 'contact_groups.id', 'contact_group_members.group_id')
      .select('contact_groups.name')
      .where('contact_group_members.contact_id', '=', c.id)
      .orderBy('contact_groups.name')
      .execute();
    contacts.push({ ...c, groups: groups.map((g) => g.name) });
  }
  const optOut =
    (await db
      .selectFrom('blacklist')
      .select(['source', 'created_at'])
      .where('organisation_id', '=', organisationId)
      .where('msisdn', '=', msisdn)
      .executeTakeFirst()) ?? null;
  return { messages, contacts, optOut };
}

/** How many of the number's outbound messages in the organisation are still waiting to be sent. */
export async function waitingOutbound(db: Db, organisationId: string, msisdn: string): Promise<number> {
  const row = await db
    .selectFrom('messages')
    .innerJoin('dispatch_queue', 'dispatch_queue.message_id', 'messages.id')
    .select((eb) => eb.fn.countAll<string | number>().as('n'))
    .where('messages.organisation_id', '=', organisationId)
    .where('messages.recipient', '=', msisdn)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}
