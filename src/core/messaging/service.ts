import { PriceList } from '../../domain/pricing.ts';
import type { MessageStatus } from '../../domain/status.ts';
import type { Channel } from '../../store/channels.ts';
import { type Db, inTransaction, type Store } from '../../store/db.ts';
import { findMessage, findMessages, listEvents, listMessages, type MessageEventRow, type MessageFilter, type MessageRow } from '../../store/messages.ts';
import { loadPrices, seedPrices, upsertPrices } from '../../store/prices.ts';
import type { PriceEntry } from '../../domain/default-prices.ts';
import { fail, isStorageError } from '../errors.ts';
import { Cache } from '../cache.ts';
import { GroupCommitter } from '../group-commit.ts';
import type { TenancyService } from '../tenancy/service.ts';
import type { EventConsumers } from '../events.ts';
import { removeFromDispatch, requeueDispatch } from '../../store/dispatch.ts';
import { DISPATCH_QUEUE, LeasedQueue } from '../../store/queue.ts';
import { acceptBatch, BalanceMovedError, type PreparedMessage } from './accept.ts';
import type { DispatchHandoff } from './handoff.ts';
import { FairQueue, HIGH_LANE, laneOf } from '../../domain/fair-queue.ts';
import type { PrepareContext } from './prepare.ts';
import { SendingWindows } from '../tenancy/sending-windows.ts';
import { deferOutsideWindows } from './deferral.ts';
import { type AppliedChanges, applyStatusChanges, type StatusChange } from './status.ts';

const CHANNEL_CACHE_TTL_MS = 5_000;

export interface MessagingOptions {
  /** How long a message may wait for an operator, from its send time. */
  messageValiditySeconds: number;
  /** Where short links point, and how long they live; absent: no short links. */
  shortLinks?: { base: string; ttlMs: number };
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
  /** Organisations' marketing windows: messages sent outside them are deferred at accept. */
  readonly windows: SendingWindows;

  constructor(
    private readonly store: Store,
    private readonly tenancy: TenancyService,
    private readonly options: MessagingOptions,
    /** What runs in the transaction of every message event. */
    readonly consumers: EventConsumers,
  ) {
    this.dispatchQueue = new LeasedQueue(store, DISPATCH_QUEUE);
    this.windows = new SendingWindows(store, tenancy);
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
      inTransaction(this.store, (trx) =>
        acceptBatch(trx, this.store.dialect, batch, this.consumers, this.dispatchQueue, now, lease, this.dispatchOrder, lockBalancesFirst),
      );
    const attempt = () =>
      accept(false).catch((err: unknown) => {
        if (err instanceof BalanceMovedError) return accept(true);
        throw err;
      });
    let rows: MessageRow[];
    try {
      rows = await attempt();
    } catch (err) {
      // SQLite's commit is in this process: when it fails, nothing was written.
      if (!isStorageError(err) || this.store.dialect !== 'postgres') throw err;
      rows = await this.afterLostAccept(batch, err, attempt);
    }
    if (lease && this.handoff) {
      const highLane = new Set(batch.filter((p) => laneOf(p.channel.flow) === HIGH_LANE).map((p) => p.row.id));
      const handed = rows.filter((m) => highLane.has(m.id) && (m.status === 'ENROUTE' || m.status === 'SCHEDULED') && m.send_at <= now);
      if (handed.length > 0) this.handoff.take(lease, handed);
    }
    return rows;
  }

  /**
   * The accept transaction failed with the database. If the connection was lost while its commit was under way, the
   * commit may have gone through; the messages' ids were chosen before, so they tell: all stored — it committed, and
   * they are answered as accepted; none — it did not (yet), and it runs once more on another connection, under the
   * same ids, so that a lost commit that lands after all makes this one fail on them (never two copies), found by a
   * last look. When the database cannot be asked, the failure is answered: the send is refused (503), never
   * acknowledged without being stored.
   */
  private async afterLostAccept(batch: PreparedMessage[], failure: unknown, attempt: () => Promise<MessageRow[]>): Promise<MessageRow[]> {
    const stored = async (): Promise<MessageRow[] | null> => {
      const ids = batch.map((p) => p.row.id);
      const found = new Map((await findMessages(this.store.db, ids)).map((m) => [m.id, m]));
      if (found.size === 0) return null;
      // One transaction stored all of them or none.
      if (found.size !== ids.length) throw failure;
      for (const signal of ['dispatch', 'webhooks', 'smpp-outbox'] as const) this.store.signals.fire(signal);
      return ids.map((id) => found.get(id)!);
    };
    // A database that does not answer its probe (bounded by a short timeout) cannot tell: answered at once.
    if (!(await this.store.health.check())) throw failure;
    const before = await stored().catch(() => {
      throw failure;
    });
    if (before) return before;
    try {
      return await attempt();
    } catch (err) {
      const after = await stored().catch(() => null);
      if (after) return after;
      throw isStorageError(err) ? err : failure;
    }
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
    const before = this.beforeAccept([prepared]);
    return before ? before.then(() => this.acceptor.submit(prepared)) : this.acceptor.submit(prepared);
  }

  /**
   * What runs before messages are stored: the screen, then the marketing windows. Null when nothing has to be waited
   * for, so messages go on in the order they came.
   */
  private beforeAccept(batch: readonly PreparedMessage[]): Promise<void> | null {
    const screening = this.screen?.(batch) ?? null;
    const now = Date.now();
    if (!batch.some((p) => this.windows.mayHold(p.channel, now))) return screening;
    return (screening ?? Promise.resolve()).then(() => deferOutsideWindows(this.store.db, this.windows, batch, now));
  }

  /**
   * What preparing a message of `channel` needs: prices, validity, its organisation's country and time zone, opt-out
   * mention and sender registry.
   */
  async prepareContext(channel: Channel, now = Date.now()): Promise<PrepareContext> {
    const [locale, optOut] = await Promise.all([this.tenancy.locale(channel.organisationId, now), this.tenancy.optOut(channel.organisationId, now)]);
    const { shortLinks } = this.options;
    return {
      priceList: this.priceList,
      validitySeconds: this.options.messageValiditySeconds,
      now,
      locale,
      optOut,
      senders: this.tenancy.senders,
      ...(shortLinks && { shortLinks }),
    };
  }

  /** Stores prepared messages together (one group commit); answers them in order. */
  acceptMany(prepared: PreparedMessage[]): Promise<MessageRow[]> {
    const before = this.beforeAccept(prepared);
    return before ? before.then(() => this.acceptor.submitMany(prepared)) : this.acceptor.submitMany(prepared);
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
    const { applied } = await this.applyStatusNow([{ messageId: id, status: 'CANCELLED', detail: 'CANCELLED_BY_USER', at: now, refund: true }]);
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
