import { PriceList } from '../domain/pricing.ts';
import type { MessageStatus } from '../domain/status.ts';
import type { Channel } from '../../store/channels.ts';
import { type Db, inTransaction, type Store } from '../../store/db.ts';
import {
  findMessage,
  findMessages,
  listEvents,
  listMessages,
  type MessageEventRow,
  type MessageFilter,
  type MessageRow,
} from '../../store/messages.ts';
import { loadPrices, seedPrices, upsertPrices } from '../../store/prices.ts';
import type { PriceEntry } from '../domain/default-prices.ts';
import { fail } from '../errors.ts';
import { Cache } from '../cache.ts';
import { GroupCommitter } from '../group-commit.ts';
import type { TenancyService } from '../tenancy/service.ts';
import type { EventConsumers } from '../events.ts';
import { removeFromDispatch, requeueDispatch } from '../../store/dispatch.ts';
import { DISPATCH_QUEUE, LeasedQueue } from '../../store/queue.ts';
import { acceptBatch, BalanceMovedError, type PreparedMessage } from './accept.ts';
import type { DispatchHandoff } from './handoff.ts';
import { FairQueue, HIGH_LANE, laneOf } from '../domain/fair-queue.ts';
import { type Campaign, type CampaignInput, type CampaignResult, CampaignService } from './campaigns.ts';
import { type SmsCampaignMessage, smsCampaignSender } from './sms-campaigns.ts';
import { type PrepareContext, prepareSms, type SmsSendInput } from './sms.ts';
import { type AppliedChanges, applyStatusChanges, type StatusChange } from './status.ts';

const CHANNEL_CACHE_TTL_MS = 5_000;

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
  /** Reads of the price list started, and the one whose list is charged. */
  private pricesReads = 0;
  private pricesReadApplied = 0;
  private readonly dispatchQueue: LeasedQueue<unknown>;
  /** Channels by id: one entry per channel read, so no bound beyond their number. */
  private readonly channels = new Cache<string, Channel>({ capacity: Number.POSITIVE_INFINITY, ttlMs: CHANNEL_CACHE_TTL_MS });
  private readonly acceptor: GroupCommitter<PreparedMessage, MessageRow>;
  private screen: ((batch: readonly PreparedMessage[]) => Promise<void> | null) | null = null;
  private handoff: DispatchHandoff | null = null;
  /** Ranks of queued messages, fair between organisations (the dispatcher says how far it has served). */
  readonly dispatchOrder = new FairQueue();
  private readonly statusWriter: GroupCommitter<StatusChange, boolean>;
  /** Campaigns of every message type; each type's pipeline registers how it sends one (SMS here, RCS in RcsService). */
  readonly campaigns: CampaignService;

  constructor(
    private readonly store: Store,
    private readonly tenancy: TenancyService,
    private readonly options: MessagingOptions,
    /** What runs in the transaction of every message event. */
    readonly consumers: EventConsumers,
  ) {
    this.dispatchQueue = new LeasedQueue(store, DISPATCH_QUEUE);
    tenancy.onChannelChange((id) => this.channels.delete(id));
    store.signals.on('settings', () => this.channels.clear());
    this.acceptor = new GroupCommitter((batch) => this.flushAccepts(batch), 256);
    this.statusWriter = new GroupCommitter(async (changes) => {
      const { applied } = await this.applyStatusNow(changes);
      const appliedIds = new Set(applied.map((m) => m.id));
      return changes.map((c) => appliedIds.has(c.messageId));
    }, 500);
    // Another node changed the price list: read it again (a failed read keeps the list this node has).
    store.signals.on('prices', () => void this.reloadPrices().catch(() => undefined));
    this.campaigns = new CampaignService(store, this);
    this.campaigns.register('SMS', smsCampaignSender(this));
  }

  async init(now = Date.now()): Promise<void> {
    await seedPrices(this.store.db, now);
    await this.reloadPrices();
  }

  async reloadPrices(): Promise<void> {
    const read = ++this.pricesReads;
    const entries = await loadPrices(this.store.db);
    // Reads may overlap (a change here, a signal from another node): a read that ends late is not the newest.
    if (read < this.pricesReadApplied) return;
    this.pricesReadApplied = read;
    this.priceList = new PriceList(entries);
  }

  prices(): PriceEntry[] {
    return this.priceList.entries();
  }

  get priceListNow(): PriceList {
    return this.priceList;
  }

  /** Changes prices; every node charges them from its next send (this one at once, the others when told). */
  async setPrices(entries: PriceEntry[], now = Date.now()): Promise<void> {
    await upsertPrices(this.store.db, entries, now);
    await this.reloadPrices();
    await this.store.signals.raise(this.store.db, 'prices');
  }

  /**
   * A channel, cached briefly. Inside a transaction pass its executor: on SQLite the transaction holds the only
   * connection, so a read through the store would wait for itself.
   */
  channel(id: string, db: Db = this.store.db, now = Date.now()): Promise<Channel> {
    const read = async () => (await this.tenancy.readChannel(db, id)) ?? fail('NOT_FOUND', `channel ${id} not found`);
    // In a transaction, never wait for a load under way through the store (it may be waiting for this transaction).
    return db === this.store.db ? this.channels.load(id, read, now) : this.channels.loadApart(id, read, now);
  }

  private async flushAccepts(batch: PreparedMessage[]): Promise<MessageRow[]> {
    const now = Date.now();
    const lease = this.handoff?.lease(now) ?? null;
    const accept = (lockBalancesFirst: boolean) =>
      inTransaction(this.store, (trx) => acceptBatch(trx, this.store.dialect, batch, this.consumers, this.dispatchQueue, now, lease, this.dispatchOrder, lockBalancesFirst));
    const rows = await accept(false).catch((err: unknown) => {
      if (err instanceof BalanceMovedError) return accept(true);
      throw err;
    });
    if (lease && this.handoff) {
      const highLane = new Set(batch.filter((p) => laneOf(p.channel.flow) === HIGH_LANE).map((p) => p.row.id));
      const handed = rows.filter((m) => highLane.has(m.id) && (m.status === 'ENROUTE' || m.status === 'SCHEDULED') && m.send_at <= now);
      if (handed.length > 0) this.handoff.take(lease, handed);
    }
    return rows;
  }

  /** Declared once by the composition root: this node's dispatcher takes the messages it accepts (see handoff.ts). */
  handOffTo(handoff: DispatchHandoff): void {
    this.handoff = handoff;
  }

  /**
   * Declared once by the composition root: what looks at messages before they are stored and may refuse them (the
   * fraud guards set their `rejection`). Every door's messages pass through it. It answers null when it decided at
   * once, so messages go on without waiting, in the order they came.
   */
  screenWith(screen: (batch: readonly PreparedMessage[]) => Promise<void> | null): void {
    this.screen = screen;
  }

  /** Stores prepared messages (any type) through the group-committed accept transaction. */
  accept(prepared: PreparedMessage): Promise<MessageRow> {
    const screening = this.screen?.([prepared]) ?? null;
    return screening ? screening.then(() => this.acceptor.submit(prepared)) : this.acceptor.submit(prepared);
  }

  async sendSms(
    channel: Channel,
    input: SmsSendInput,
    afterInsert?: PreparedMessage['afterInsert'],
    now = Date.now(),
  ): Promise<MessageRow> {
    const prepared = await prepareSms(channel, input, await this.prepareContext(channel, now));
    prepared.afterInsert = afterInsert;
    return this.accept(prepared);
  }

  /** What preparing a message of `channel` needs: prices, validity, and its organisation's country and time zone. */
  async prepareContext(channel: Channel, now = Date.now()): Promise<PrepareContext> {
    const locale = await this.tenancy.locale(channel.organisationId, now);
    return { priceList: this.priceList, validitySeconds: this.options.messageValiditySeconds, now, locale };
  }

  /** Stores prepared messages together (one group commit); answers them in order. */
  acceptMany(prepared: PreparedMessage[]): Promise<MessageRow[]> {
    const screening = this.screen?.(prepared) ?? null;
    return screening ? screening.then(() => this.acceptor.submitMany(prepared)) : this.acceptor.submitMany(prepared);
  }

  /** An SMS campaign (the legacy interface's group sends): the campaign use case, as every door sends one. */
  sendCampaign(channel: Channel, input: CampaignInput<SmsCampaignMessage>, now = Date.now()): Promise<CampaignResult> {
    return this.campaigns.create('SMS', channel, input, now);
  }

  campaign(campaignId: string, channelIds: string[]): Promise<Campaign> {
    return this.campaigns.get(campaignId, channelIds);
  }

  cancelCampaign(campaignId: string, channelIds: string[], now = Date.now()): Promise<Campaign> {
    return this.campaigns.cancel(campaignId, channelIds, now);
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
