import { uuidv7 } from '../domain/ids.ts';
import { PriceList } from '../domain/pricing.ts';
import type { MessageStatus } from '../domain/status.ts';
import { findCampaign, insertCampaign } from '../../store/campaigns.ts';
import type { Channel } from '../../store/channels.ts';
import { type Db, inTransaction, type Store } from '../../store/db.ts';
import {
  countByStatus,
  findMessage,
  findMessages,
  listEvents,
  listMessages,
  listScheduledOfCampaign,
  type MessageEventRow,
  type MessageFilter,
  type MessageRow,
} from '../../store/messages.ts';
import { loadPrices, seedPrices, upsertPrices } from '../../store/prices.ts';
import type { PriceEntry } from '../domain/default-prices.ts';
import { CoreError, fail } from '../errors.ts';
import { Cache } from '../cache.ts';
import { GroupCommitter } from '../group-commit.ts';
import type { TenancyService } from '../tenancy/service.ts';
import type { EventConsumers } from '../events.ts';
import { removeFromDispatch, requeueDispatch } from '../../store/dispatch.ts';
import { DISPATCH_QUEUE, LeasedQueue } from '../../store/queue.ts';
import { acceptBatch, type PreparedMessage } from './accept.ts';
import { prepareSms, type SmsSendInput } from './sms.ts';
import { type AppliedChanges, applyStatusChanges, type StatusChange } from './status.ts';

const CHANNEL_CACHE_TTL_MS = 5_000;
export const MAX_CAMPAIGN_RECIPIENTS = 10_000;

export interface CampaignInput {
  recipients: Array<{ to: string; refClient?: string | null }>;
  message: Omit<SmsSendInput, 'to' | 'refClient' | 'source' | 'campaignId'>;
  refClient?: string | null;
}

export interface CampaignResult {
  campaignId: string;
  messages: MessageRow[];
  /** Recipients refused, each with the error about its `recipients[i]` entry. */
  errors: Array<{ index: number; to: string; error: CoreError }>;
}

export interface MessagingOptions {
  /** How long a message may wait for an operator, from its send time. */
  messageValiditySeconds: number;
}

/**
 * The one messaging pipeline every door uses: accept (validate, price, charge, store — group-committed), status
 * changes through the status machine, reading and cancelling.
 */
export class MessagingService {
  private priceList = new PriceList([]);
  private readonly dispatchQueue: LeasedQueue<unknown>;
  /** Channels by id: one entry per channel read, so no bound beyond their number. */
  private readonly channels = new Cache<string, Channel>({ capacity: Number.POSITIVE_INFINITY, ttlMs: CHANNEL_CACHE_TTL_MS });
  private readonly acceptor: GroupCommitter<PreparedMessage, MessageRow>;
  private readonly statusWriter: GroupCommitter<StatusChange, boolean>;

  constructor(
    private readonly store: Store,
    private readonly tenancy: TenancyService,
    private readonly options: MessagingOptions,
    /** What runs in the transaction of every message event. */
    readonly consumers: EventConsumers,
  ) {
    this.dispatchQueue = new LeasedQueue(store, DISPATCH_QUEUE);
    tenancy.onChannelChange((id) => this.channels.delete(id));
    this.acceptor = new GroupCommitter((batch) => this.flushAccepts(batch), 256);
    this.statusWriter = new GroupCommitter(async (changes) => {
      const { applied } = await this.applyStatusNow(changes);
      const appliedIds = new Set(applied.map((m) => m.id));
      return changes.map((c) => appliedIds.has(c.messageId));
    }, 500);
  }

  async init(now = Date.now()): Promise<void> {
    await seedPrices(this.store.db, now);
    await this.reloadPrices();
  }

  async reloadPrices(): Promise<void> {
    this.priceList = new PriceList(await loadPrices(this.store.db));
  }

  prices(): PriceEntry[] {
    return this.priceList.entries();
  }

  get priceListNow(): PriceList {
    return this.priceList;
  }

  async setPrices(entries: PriceEntry[], now = Date.now()): Promise<void> {
    await upsertPrices(this.store.db, entries, now);
    await this.reloadPrices();
  }

  /**
   * A channel, cached briefly. Inside a transaction pass its executor: on SQLite the transaction holds the only
   * connection, so a read through the store would wait for itself.
   */
  async channel(id: string, db: Db = this.store.db, now = Date.now()): Promise<Channel> {
    const cached = this.channels.get(id, now);
    if (cached) return cached;
    const channel = (await this.tenancy.readChannel(db, id)) ?? fail('NOT_FOUND', `channel ${id} not found`);
    this.channels.set(id, channel, now);
    return channel;
  }

  private async flushAccepts(batch: PreparedMessage[]): Promise<MessageRow[]> {
    const now = Date.now();
    return inTransaction(this.store, (trx) => acceptBatch(trx, this.store.dialect, batch, this.consumers, this.dispatchQueue, now));
  }

  /** Stores prepared messages (any type) through the group-committed accept transaction. */
  accept(prepared: PreparedMessage): Promise<MessageRow> {
    return this.acceptor.submit(prepared);
  }

  async sendSms(
    channel: Channel,
    input: SmsSendInput,
    afterInsert?: PreparedMessage['afterInsert'],
    now = Date.now(),
  ): Promise<MessageRow> {
    const prepared = await prepareSms(channel, input, this.prepareContext(now));
    prepared.afterInsert = afterInsert;
    return this.accept(prepared);
  }

  prepareContext(now = Date.now()) {
    return { priceList: this.priceList, validitySeconds: this.options.messageValiditySeconds, now };
  }

  async sendCampaign(channel: Channel, input: CampaignInput, now = Date.now()): Promise<CampaignResult> {
    if (input.recipients.length === 0) fail('INVALID_REQUEST', 'at least one recipient is required', 'recipients');
    if (input.recipients.length > MAX_CAMPAIGN_RECIPIENTS) {
      fail('INVALID_REQUEST', `at most ${MAX_CAMPAIGN_RECIPIENTS} recipients per request`, 'recipients');
    }
    const campaignId = uuidv7(now);
    const errors: CampaignResult['errors'] = [];
    const prepared: PreparedMessage[] = [];
    const ctx = this.prepareContext(now);
    // The shared fields are checked once, so a bad body fails the whole request rather than every recipient.
    await prepareSms(channel, { ...input.message, to: '33600000000', refClient: input.refClient, source: 'CAMPAIGN' }, ctx);
    for (const [index, r] of input.recipients.entries()) {
      try {
        prepared.push(
          await prepareSms(
            channel,
            {
              ...input.message,
              to: r.to,
              refClient: r.refClient ?? input.refClient ?? null,
              source: 'CAMPAIGN',
              campaignId,
              toField: `recipients[${index}].to`,
            },
            ctx,
          ),
        );
      } catch (err) {
        if (!(err instanceof CoreError)) throw err;
        errors.push({ index, to: r.to, error: err });
      }
    }
    const sendAt = prepared[0]?.row.send_at ?? now;
    await insertCampaign(this.store.db, {
      id: campaignId,
      organisation_id: channel.organisationId,
      channel_id: channel.id,
      ref_client: input.refClient ?? null,
      send_at: sendAt,
      created_at: now,
      recipients: input.recipients.length,
      body: JSON.stringify({ text: input.message.text, encoding: input.message.encoding ?? null }),
    });
    const messages = await this.acceptor.submitMany(prepared);
    return { campaignId, messages, errors };
  }

  async campaign(campaignId: string, channelIds: string[]) {
    const c = await findCampaign(this.store.db, campaignId);
    if (!c || !channelIds.includes(c.channel_id)) fail('NOT_FOUND', `campaign ${campaignId} not found`);
    return { campaign: c, counts: await countByStatus(this.store.db, campaignId) };
  }

  async cancelCampaign(campaignId: string, channelIds: string[], now = Date.now()) {
    const { campaign } = await this.campaign(campaignId, channelIds);
    const scheduled = await listScheduledOfCampaign(this.store.db, campaignId);
    if (scheduled.length === 0) fail('CONFLICT', `campaign ${campaignId} has no scheduled message left to cancel`);
    await this.applyStatusNow(
      scheduled.map((m) => ({ messageId: m.id, status: 'CANCELLED' as const, detail: 'CANCELLED_BY_USER', at: now, refund: true })),
    );
    await removeFromDispatch(this.store.db, scheduled.map((m) => m.id));
    return this.campaign(campaign.id, channelIds);
  }

  async get(id: string, channelIds: string[], type?: string): Promise<MessageRow> {
    const m = await findMessage(this.store.db, id);
    if (!m || !channelIds.includes(m.channel_id) || (type && m.type !== type)) fail('NOT_FOUND', `message ${id} not found`);
    return m;
  }

  getMany(ids: string[]): Promise<MessageRow[]> {
    return findMessages(this.store.db, ids);
  }

  list(filter: MessageFilter): Promise<MessageRow[]> {
    return listMessages(this.store.db, filter);
  }

  async events(id: string, channelIds: string[], type?: string): Promise<MessageEventRow[]> {
    await this.get(id, channelIds, type);
    return listEvents(this.store.db, id);
  }

  /** Cancels a scheduled message: CANCELLED and refunded; anything else is a conflict. */
  async cancel(id: string, channelIds: string[], type?: string, now = Date.now()): Promise<MessageRow> {
    const m = await this.get(id, channelIds, type);
    if (m.status !== 'SCHEDULED') fail('CONFLICT', `message ${id} is ${m.status}; only a SCHEDULED message can be cancelled`);
    const { applied } = await this.applyStatusNow([
      { messageId: id, status: 'CANCELLED', detail: 'CANCELLED_BY_USER', at: now, refund: true },
    ]);
    if (applied.length === 0) fail('CONFLICT', `message ${id} left SCHEDULED before it could be cancelled`);
    await removeFromDispatch(this.store.db, [id]);
    return applied[0]!;
  }

  /** Status changes from carriers and workers, group-committed; resolves true when the change was applied. */
  updateStatus(change: StatusChange): Promise<boolean> {
    return this.statusWriter.submit(change);
  }

  updateStatuses(changes: StatusChange[]): Promise<boolean[]> {
    return this.statusWriter.submitMany(changes);
  }

  /** Applies status changes in the caller's transaction. */
  applyStatusIn(db: Db, changes: StatusChange[]): Promise<AppliedChanges> {
    return applyStatusChanges(db, this.store.dialect, changes, async (cid) => (await this.channel(cid, db)).type, this.consumers);
  }

  /** Applies status changes in their own transaction right away. */
  async applyStatusNow(changes: StatusChange[]): Promise<AppliedChanges> {
    return inTransaction(this.store, (trx) =>
      applyStatusChanges(trx, this.store.dialect, changes, async (cid) => (await this.channel(cid, trx)).type, this.consumers),
    );
  }

  /**
   * Places messages with an operator again at `dueAt` (a call whose line was busy): back on the dispatch queue,
   * still ENROUTE. Messages that reached a final status meanwhile are left alone.
   */
  async placeAgain(messageIds: string[], dueAt: number): Promise<void> {
    const live = (await this.getMany(messageIds)).filter((m) => m.status === 'ENROUTE').map((m) => m.id);
    if (live.length === 0) return;
    await inTransaction(this.store, async (trx) => {
      await requeueDispatch(trx, live, dueAt);
      await this.dispatchQueue.wake(trx);
    });
  }

  /** Waits until queued accepts and status changes are written (graceful stop). */
  async drain(): Promise<void> {
    await this.acceptor.idle();
    await this.statusWriter.idle();
  }

  statusOf(m: MessageRow): MessageStatus {
    return m.status as MessageStatus;
  }
}
