import type { Db } from './db.ts';
import type { MessageTemplateTable } from './schema.ts';

/** Channels' message templates. */

export type MessageTemplateRow = MessageTemplateTable;

export async function insertMessageTemplate(db: Db, row: MessageTemplateRow): Promise<void> {
  await db.insertInto('message_templates').values(row).execute();
}

export async function findMessageTemplate(db: Db, id: string): Promise<MessageTemplateRow | null> {
  return (await db.selectFrom('message_templates').selectAll().where('id', '=', id).executeTakeFirst()) ?? null;
}

export async function findMessageTemplateByName(db: Db, channelId: string, name: string): Promise<MessageTemplateRow | null> {
  return (await db.selectFrom('message_templates').selectAll().where('channel_id', '=', channelId).where('name', '=', name).executeTakeFirst()) ?? null;
}

/** A channel's templates by name. */
export async function listMessageTemplates(db: Db, channelId: string): Promise<MessageTemplateRow[]> {
  return db.selectFrom('message_templates').selectAll().where('channel_id', '=', channelId).orderBy('name').execute();
}

export async function updateMessageTemplate(db: Db, id: string, change: Pick<MessageTemplateRow, 'name' | 'text' | 'variables' | 'updated_at'>): Promise<void> {
  await db.updateTable('message_templates').set(change).where('id', '=', id).execute();
}

export async function deleteMessageTemplate(db: Db, id: string): Promise<void> {
  await db.deleteFrom('message_templates').where('id', '=', id).execute();
}
