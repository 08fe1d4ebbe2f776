import { uuidv7 } from '../../domain/ids.ts';
import { type ParsedTemplate, parseTemplate, renderTemplate, TemplateError } from '../../domain/templates.ts';
import type { Channel } from '../../store/channels.ts';
import type { Store } from '../../store/db.ts';
import {
  deleteMessageTemplate,
  findMessageTemplate,
  findMessageTemplateByName,
  insertMessageTemplate,
  listMessageTemplates,
  type MessageTemplateRow,
  updateMessageTemplate,
} from '../../store/message-templates.ts';
import { fail } from '../errors.ts';

export const MAX_TEMPLATE_TEXT = 5000;

export interface MessageTemplate {
  id: string;
  channelId: string;
  name: string;
  text: string;
  variables: string[];
  createdAt: number;
  updatedAt: number;
}

export interface TemplateInput {
  name: string;
  text: string;
  /** When given, the only variables the text may use. */
  variables?: string[];
}

/** A template's text and the values one recipient has; which template, for a send. */
export interface TemplateUse {
  id: string;
  values?: Record<string, string>;
}

function toTemplate(r: MessageTemplateRow): MessageTemplate {
  return {
    id: r.id,
    channelId: r.channel_id,
    name: r.name,
    text: r.text,
    variables: JSON.parse(r.variables) as string[],
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
  };
}

/** A template's text parsed; a bad one is a 400 about `field`. */
export function parsedText(text: string, declared: string[] | undefined, field: string): ParsedTemplate {
  try {
    return parseTemplate(text, declared);
  } catch (err) {
    if (err instanceof TemplateError) fail('INVALID_REQUEST', err.message, field);
    throw err;
  }
}

/**
 * One recipient's text; a missing value (or, `strict`, one the template does not use) is a 400 naming `where` (the
 * row, for a campaign) and the variable.
 */
export function renderFor(template: ParsedTemplate, values: Record<string, string>, where: string, field: string, strict = true): string {
  try {
    return renderTemplate(template, values, strict);
  } catch (err) {
    if (err instanceof TemplateError) fail('INVALID_REQUEST', `${where}: ${err.message}`, err.variable ? `${field}.${err.variable}` : field);
    throw err;
  }
}

/** Named templates of a channel: made, read, changed and deleted; read fresh from the store (no cache to keep). */
export class TemplateService {
  constructor(private readonly store: Store) {}

  async create(channel: Channel, input: TemplateInput, now = Date.now()): Promise<MessageTemplate> {
    const { name, text, variables } = this.checked(input);
    if (await findMessageTemplateByName(this.store.db, channel.id, name)) fail('CONFLICT', `a template named "${name}" exists on this channel`, 'name');
    const row: MessageTemplateRow = {
      id: uuidv7(now),
      channel_id: channel.id,
      organisation_id: channel.organisationId,
      name,
      text,
      variables: JSON.stringify(variables),
      created_at: now,
      updated_at: now,
    };
    try {
      await insertMessageTemplate(this.store.db, row);
    } catch (err) {
      // Two creations of the same name at once: the unique index decides.
      if (await findMessageTemplateByName(this.store.db, channel.id, name)) fail('CONFLICT', `a template named "${name}" exists on this channel`, 'name');
      throw err;
    }
    return toTemplate(row);
  }

  async list(channel: Channel): Promise<MessageTemplate[]> {
    return (await listMessageTemplates(this.store.db, channel.id)).map(toTemplate);
  }

  /** A template of this channel; 404 for any other. */
  async get(channel: Channel, id: string, field?: string): Promise<MessageTemplate> {
    const row = await findMessageTemplate(this.store.db, id);
    if (!row || row.channel_id !== channel.id) fail('NOT_FOUND', `template ${id} not found on this channel`, field);
    return toTemplate(row);
  }

  /** What is not given stays; a new text is checked as at creation. */
  async update(channel: Channel, id: string, change: Partial<TemplateInput>, now = Date.now()): Promise<MessageTemplate> {
    const current = await this.get(channel, id);
    const { name, text, variables } = this.checked({ name: change.name ?? current.name, text: change.text ?? current.text, variables: change.variables });
    if (name !== current.name && (await findMessageTemplateByName(this.store.db, channel.id, name))) {
      fail('CONFLICT', `a template named "${name}" exists on this channel`, 'name');
    }
    await updateMessageTemplate(this.store.db, id, { name, text, variables: JSON.stringify(variables), updated_at: now });
    return this.get(channel, id);
  }

  async delete(channel: Channel, id: string): Promise<MessageTemplate> {
    const current = await this.get(channel, id);
    await deleteMessageTemplate(this.store.db, id);
    return current;
  }

  /** A template of the channel, parsed, for a send (`field` names it in errors). */
  async parsed(channel: Channel, id: string, field: string): Promise<{ template: MessageTemplate; parsed: ParsedTemplate }> {
    const template = await this.get(channel, id, field);
    return { template, parsed: parseTemplate(template.text) };
  }

  private checked(input: TemplateInput): { name: string; text: string; variables: string[] } {
    const name = input.name.trim();
    if (name.length === 0 || name.length > 100) fail('INVALID_REQUEST', '1 to 100 characters', 'name');
    if (input.text.length === 0 || input.text.length > MAX_TEMPLATE_TEXT) fail('INVALID_REQUEST', `1 to ${MAX_TEMPLATE_TEXT} characters`, 'text');
    const parsed = parsedText(input.text, input.variables, 'text');
    return { name, text: input.text, variables: parsed.variables };
  }
}

/**
 * The text of a send: its own `text`, or its template's filled with its values — exactly one of the two. Errors name
 * `body.text` or `template`.
 */
export async function sendText(templates: TemplateService, channel: Channel, text: string | undefined, use: TemplateUse | undefined): Promise<string> {
  if (text !== undefined && use !== undefined) fail('INVALID_REQUEST', 'give body.text or template, not both', 'template');
  if (use === undefined) return text ?? fail('INVALID_REQUEST', 'body.text or template is required', 'body.text');
  const { parsed } = await templates.parsed(channel, use.id, 'template.id');
  return renderFor(parsed, use.values ?? {}, `template ${use.id}`, 'template.values');
}

/**
 * Each recipient's text of a campaign: the campaign's own `text`, or its template filled with the recipient's values
 * over the campaign's (other values, a file's other columns, are left alone). Exactly one of text and template; a
 * missing value is a 400 naming the recipient's row and the variable.
 */
export async function campaignTexts(
  templates: TemplateService,
  channel: Channel,
  message: { text?: string; template?: TemplateUse },
  recipients: Array<{ values?: Record<string, string>; label: string; valuesField: string }>,
): Promise<{ texts: string[]; template?: MessageTemplate }> {
  if (message.template === undefined) {
    const text = await sendText(templates, channel, message.text, undefined);
    return { texts: recipients.map(() => text) };
  }
  if (message.text !== undefined) fail('INVALID_REQUEST', 'give body.text or template, not both', 'template');
  const { template, parsed } = await templates.parsed(channel, message.template.id, 'template.id');
  const shared = message.template.values ?? {};
  const texts = recipients.map((r) => renderFor(parsed, { ...shared, ...r.values }, r.label, r.valuesField, false));
  return { texts, template };
}
