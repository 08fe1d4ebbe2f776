import type { RequestedDate } from '../../domain/dates.ts';
import { countClicksByCampaign, countLinksByCampaign } from '../../store/short-links.ts';
import { iso } from '../../domain/dates.ts';
import { uuidv7 } from '../../domain/ids.ts';
import {
  type CampaignFilter,
  type CampaignRow,
  countCampaignsByStatus,
  countMessageIn,
  findCampaign,
  insertCampaign,
  listCampaigns,
  lockCampaign,
  lockScheduledOfCampaign,
  type MessageBodyChange,
  replaceRefClient,
  updateCampaign,
} from '../../store/campaigns.ts';
import type { Channel } from '../../store/channels.ts';
import { type Db, inTransaction, type Store } from '../../store/db.ts';
import { removeFromDispatch } from '../../store/dispatch.ts';
import type { MessageRow } from '../../store/messages.ts';
import { findPayingSetup, lockBalances } from '../../store/organisations.ts';
import { DISPATCH_QUEUE, LeasedQueue } from '../../store/queue.ts';
import { CoreError, fail } from '../errors.ts';
import type { PreparedMessage } from '../messaging/accept.ts';
import { applyBodyChange } from './pricing.ts';
import type { MessagingService } from '../messaging/service.ts';
import { checkRefClient, resolveSendAt } from '../messaging/prepare.ts';
import { rescheduleInWindow } from '../messaging/deferral.ts';

export const MAX_CAMPAIGN_RECIPIENTS = 10_000;

/**
 * What a campaign's message is, and what its body may become, by message type. Each type that has campaigns adds
 * itself to both, beside its sender (`declare module`: sms/campaigns.ts, rcs/campaigns.ts), so campaigns know no type.
 */
export interface CampaignMessages {}
export interface CampaignBodies {}
export type CampaignType = keyof CampaignMessages;

export interface CampaignRecipient {
  to: string;
  /** This recipient's own reference; the campaign's otherwise. */
  refClient?: string | null;
  /** This recipient's values of the template's variables. */
  values?: Record<string, string>;
  /** How errors name it (`row 3 (line 4)` of a file); `recipients[i]` otherwise. */
  label?: string;
}

/** A recipient as a type's sender gets it. */
export interface SenderRecipient {
  to: string;
  refClient: string | null;
  field: string;
  values?: Record<string, string>;
  label: string;
  /** The field errors about its values name: `recipients[i].values`, or the file it came from. */
  valuesField: string;
}

export interface CampaignInput<M> {
  recipients: CampaignRecipient[];
  message: M;
  refClient?: string | null;
}

export interface CampaignResult {
  campaignId: string;
  messages: MessageRow[];
  /** Recipients refused, each with the error about its `recipients[i]` entry. */
  errors: Array<{ index: number; to: string; error: CoreError }>;
}

export interface Campaign {
  campaign: CampaignRow;
  /** Its messages per status. */
  counts: Record<string, number>;
  /** Clicks on the short links of its messages. */
  clicks: number;
  /** Short links its messages carry, and how many of them were clicked at least once. */
  links: { links: number; clicked: number };
}

/** A change of a scheduled campaign; what is left undefined stays as it is. */
export interface CampaignChange<B> {
  sentDate?: RequestedDate;
  /** Null or empty removes it. */
  refClient?: string | null;
  body?: B;
}

const NO_LINKS = Object.freeze({ links: 0, clicked: 0 });

export type CampaignState = 'SCHEDULED' | 'SENT' | 'CANCELLED';

/** Cancelled as a whole, still waiting for its send time, or gone out (its messages then live their own lives). */
export function campaignState(c: CampaignRow, now: number): CampaignState {
  if (c.cancelled_at !== null) return 'CANCELLED';
  return c.send_at > now ? 'SCHEDULED' : 'SENT';
}

/** How one type of message goes out as part of a campaign. */
export interface CampaignSender<M, B> {
  /**
   * Checks what every message of the campaign shares, so a bad field fails the whole request; answers when the
   * messages go and the body the campaign keeps.
   */
  check(channel: Channel, message: M, refClient: string | null, now: number, recipients: SenderRecipient[]): Promise<{ sendAt: number; body: object }>;
  /** Sends the message to each recipient as part of the campaign: in order, each one's message or the error about it. */
  send(channel: Channel, message: M, recipients: SenderRecipient[], campaignId: string, now: number): Promise<Array<MessageRow | CoreError>>;
  /**
   * Checks a new body for the campaign (`current` is the body it keeps); answers the body it will keep and what each
   * of its scheduled messages becomes, priced again.
   */
  rebody(channel: Channel, body: B, current: Record<string, unknown>, now: number): Rebodied | Promise<Rebodied>;
}

/** A campaign's new body: what it keeps, what each scheduled message becomes, and what else goes with the change. */
export interface Rebodied {
  body: object;
  change(m: MessageRow): MessageBodyChange;
  /** Run in the change's transaction once the messages have their new bodies (their short links, for SMS). */
  written?(db: Db, messages: MessageRow[]): Promise<void>;
}

/** Sends one message into a campaign: at `defaultSendAt` unless the request says otherwise, with `afterInsert` run. */
export type SendIntoCampaign = (
  campaign: { campaignId: string; defaultSendAt: number | null },
  afterInsert: NonNullable<PreparedMessage['afterInsert']>,
) => Promise<MessageRow>;

/**
 * Campaigns of every message type: one send to many recipients, each message validated, priced and accepted through
 * the type's own pipeline (its `CampaignSender`); messages added later; reading and listing with counts per status;
 * changing (send time, reference, body priced again) and cancelling one while it is scheduled.
 */
export class CampaignService {
  private readonly senders = new Map<CampaignType, CampaignSender<unknown, unknown>>();
  private readonly dispatchQueue: LeasedQueue<unknown>;

  constructor(
    private readonly store: Store,
    private readonly messaging: MessagingService,
  ) {
    this.dispatchQueue = new LeasedQueue(store, DISPATCH_QUEUE);
  }

  register<T extends CampaignType>(type: T, sender: CampaignSender<CampaignMessages[T], CampaignBodies[T]>): void {
    this.senders.set(type, sender as CampaignSender<unknown, unknown>);
  }

  private sender(type: string): CampaignSender<unknown, unknown> {
    return this.senders.get(type as CampaignType) ?? fail('CHANNEL_TYPE_MISMATCH', `${type} channels have no campaigns`);
  }

  async create<T extends CampaignType>(type: T, channel: Channel, input: CampaignInput<CampaignMessages[T]>, now = Date.now()): Promise<CampaignResult> {
    if (channel.type !== type) fail('CHANNEL_TYPE_MISMATCH', `${type} campaigns go through a ${type} channel, not ${channel.type}`);
    if (input.recipients.length === 0) fail('INVALID_REQUEST', 'at least one recipient is required', 'recipients');
    if (input.recipients.length > MAX_CAMPAIGN_RECIPIENTS) {
      fail('INVALID_REQUEST', `at most ${MAX_CAMPAIGN_RECIPIENTS} recipients per request`, 'recipients');
    }
    const sender = this.sender(type);
    const refClient = checkRefClient(input.refClient);
    const recipients = senderRecipients(input.recipients, refClient);
    const { sendAt, body } = await sender.check(channel, input.message, refClient, now, recipients);
    const campaignId = uuidv7(now);
    await insertCampaign(this.store.db, {
      id: campaignId,
      organisation_id: channel.organisationId,
      channel_id: channel.id,
      ref_client: refClient,
      send_at: sendAt,
      created_at: now,
      recipients: input.recipients.length,
      body: JSON.stringify(body),
    });
    const results = await sender.send(channel, input.message, recipients, campaignId, now);
    const messages: MessageRow[] = [];
    const errors: CampaignResult['errors'] = [];
    results.forEach((r, index) => {
      if (r instanceof CoreError) errors.push({ index, to: input.recipients[index]!.to, error: r });
      else messages.push(r);
    });
    return { campaignId, messages, errors };
  }

  /** A campaign of one of these channels; 404 for any other. */
  async get(id: string, channelIds: string[]): Promise<Campaign> {
    const campaign = await this.row(id, channelIds);
    const counts = await countCampaignsByStatus(this.store.db, [campaign]);
    const clicks = await countClicksByCampaign(this.store.db, [id]);
    const links = await countLinksByCampaign(this.store.db, [id]);
    return { campaign, counts: counts.get(id) ?? {}, clicks: clicks.get(id) ?? 0, links: links.get(id) ?? NO_LINKS };
  }

  /** The campaign alone, without its counts (a read of every message of it): for what changes it or adds to it. */
  private async row(id: string, channelIds: string[]): Promise<CampaignRow> {
    const campaign = await findCampaign(this.store.db, id);
    if (!campaign || !channelIds.includes(campaign.channel_id)) fail('NOT_FOUND', `campaign ${id} not found`);
    return campaign;
  }

  /** Newest first. */
  async list(filter: CampaignFilter): Promise<Campaign[]> {
    const rows = await listCampaigns(this.store.db, filter);
    const counts = await countCampaignsByStatus(this.store.db, rows);
    const ids = rows.map((c) => c.id);
    const clicks = await countClicksByCampaign(this.store.db, ids);
    const links = await countLinksByCampaign(this.store.db, ids);
    return rows.map((campaign) => ({
      campaign,
      counts: counts.get(campaign.id) ?? {},
      clicks: clicks.get(campaign.id) ?? 0,
      links: links.get(campaign.id) ?? NO_LINKS,
    }));
  }

  /**
   * Sends one more message as part of a campaign of `channel` that is not cancelled: at the campaign's send time
   * while it is ahead, unless the message says otherwise. The campaign counts it in the message's own transaction,
   * which fails if the campaign was cancelled or moved meanwhile.
   */
  async addMessage(id: string, channel: Channel, channelIds: string[], send: SendIntoCampaign, now = Date.now()): Promise<MessageRow> {
    const campaign = await this.row(id, channelIds);
    if (campaign.channel_id !== channel.id) {
      fail('FORBIDDEN_CHANNEL', `campaign ${id} belongs to another channel; a key sends only on its own channel`);
    }
    if (campaign.cancelled_at !== null) fail('CONFLICT', `campaign ${id} was cancelled; no message can be added to it`);
    const scheduled = campaign.send_at > now;
    return send({ campaignId: id, defaultSendAt: scheduled ? campaign.send_at : null }, async (db, row) => {
      const atCampaignTime = scheduled && row.send_at === campaign.send_at;
      if (!(await countMessageIn(db, id, atCampaignTime ? campaign.send_at : undefined))) {
        fail('CONFLICT', `campaign ${id} was cancelled or rescheduled while the message was sent; send it again`);
      }
    });
  }

  /**
   * Changes a scheduled campaign, all or nothing: its send time (every scheduled message of it moves, its validity
   * with it), its reference (and that of the messages that carry it), its body (every scheduled message priced again:
   * the difference is charged or refunded, within the balance and the spending limits).
   */
  async change<T extends CampaignType>(id: string, channelIds: string[], change: CampaignChange<CampaignBodies[T]>, now = Date.now()): Promise<Campaign> {
    if (change.sentDate === undefined && change.refClient === undefined && change.body === undefined) {
      fail('INVALID_REQUEST', 'nothing to change: give sentDate, refClient or body');
    }
    const campaign = await this.row(id, channelIds);
    assertScheduled(campaign, now);
    // Everything that reads outside the transaction comes first: on SQLite the transaction holds the only connection.
    const channel = await this.messaging.channel(campaign.channel_id);
    const refClient = change.refClient === undefined ? undefined : checkRefClient(change.refClient);
    let sendAt: number | undefined;
    if (change.sentDate !== undefined) {
      const { locale } = await this.messaging.prepareContext(channel, now);
      sendAt = resolveSendAt(change.sentDate, now, locale.timeZone);
    }
    const rebodied =
      change.body === undefined
        ? undefined
        : await this.sender(channel.type).rebody(channel, change.body, JSON.parse(campaign.body) as Record<string, unknown>, now);

    await inTransaction(this.store, async (trx) => {
      const locked = await this.lockForChange(trx, campaign, rebodied !== undefined);
      assertScheduled(locked, now);
      const messages = await lockScheduledOfCampaign(trx, this.store.dialect, id);
      const ids = messages.map((m) => m.id);
      if (refClient !== undefined) {
        await replaceRefClient(trx, ids, locked.ref_client, refClient);
        await updateCampaign(trx, id, { ref_client: refClient });
      }
      if (rebodied) {
        const own = messages.filter((m) => m.channel_id === channel.id);
        await applyBodyChange(trx, this.store.dialect, channel, own, rebodied.change, `campaign ${id}`, now);
        await rebodied.written?.(trx, own);
        await updateCampaign(trx, id, { body: JSON.stringify(rebodied.body) });
      }
      if (sendAt !== undefined) {
        // A time outside the marketing window moves to its next opening, on the ramp.
        const { moved, firstAt } = await rescheduleInWindow(trx, this.messaging.windows, channel, messages, sendAt, now);
        if (moved !== ids.length) fail('CONFLICT', `campaign ${id}: some of its messages are being sent; it can no longer be changed`);
        await updateCampaign(trx, id, { send_at: firstAt });
        await this.dispatchQueue.wake(trx);
      }
    });
    return this.get(id, channelIds);
  }

  /** Cancels a scheduled campaign: it and its scheduled messages, CANCELLED and refunded, in one transaction. */
  async cancel(id: string, channelIds: string[], now = Date.now()): Promise<Campaign> {
    const campaign = await this.row(id, channelIds);
    assertScheduled(campaign, now);
    await inTransaction(this.store, async (trx) => {
      const locked = await this.lockForChange(trx, campaign, true);
      assertScheduled(locked, now);
      const scheduled = await lockScheduledOfCampaign(trx, this.store.dialect, id);
      await this.messaging.applyStatusIn(
        trx,
        scheduled.map((m) => ({ messageId: m.id, status: 'CANCELLED' as const, detail: 'CANCELLED_BY_USER', at: now, refund: true })),
      );
      await removeFromDispatch(
        trx,
        scheduled.map((m) => m.id),
      );
      await updateCampaign(trx, id, { cancelled_at: now });
    });
    return this.get(id, channelIds);
  }

  /**
   * Locks the campaign for a change; with `money`, its payer's balance first, in the order the accept transaction
   * takes them (balance, then the campaign it counts a message in), so the two never wait on each other in a cycle.
   */
  private async lockForChange(trx: Db, campaign: CampaignRow, money: boolean): Promise<CampaignRow> {
    if (money) {
      const [org] = await findPayingSetup(trx, [campaign.organisation_id]);
      const payer = org?.parent_billing === 1 && org.parent_id ? org.parent_id : campaign.organisation_id;
      await lockBalances(trx, this.store.dialect, [payer]);
    }
    return (await lockCampaign(trx, this.store.dialect, campaign.id))!;
  }
}

export function senderRecipients(recipients: CampaignRecipient[], refClient: string | null): SenderRecipient[] {
  return recipients.map((r, i) => ({
    to: r.to,
    refClient: r.refClient ?? refClient,
    field: `recipients[${i}].to`,
    ...(r.values && { values: r.values }),
    label: r.label ?? `recipients[${i}]`,
    valuesField: r.label ? 'csv' : `recipients[${i}].values`,
  }));
}

function assertScheduled(c: CampaignRow, now: number): void {
  const state = campaignState(c, now);
  if (state === 'CANCELLED') fail('CONFLICT', `campaign ${c.id} was cancelled`);
  if (state === 'SENT') fail('CONFLICT', `campaign ${c.id} started sending at ${iso(c.send_at)}; only a scheduled campaign can be changed or cancelled`);
}
