import type { Logger } from 'pino';
import type { TernConfig } from '../../config.ts';
import { uuidv7 } from '../domain/ids.ts';
import { PriceList } from '../domain/pricing.ts';
import type { MessageStatus } from '../domain/status.ts';
import { type Channel, findChannel } from '../../store/channels.ts';
import { type Db, inTransaction, type Store } from '../../store/db.ts';
import {
  countByStatus,
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
import { acceptBatch, type EventHook, type PreparedMessage } from './accept.ts';
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
  errors: Array<{ index: number; to: string; errorCode: string; detail: string }>;
}

/**
 * The one messaging pipeline every door uses: accept (validate, price, charge, store — group-committed), status
 * changes through the status machine, reading and cancelling.
 */
export class MessagingService {
  private priceList = new PriceList([]);
  private readonly hooks: EventHook[] = [];
  private readonly acceptedListeners: Array<(rows: MessageRow[]) => void> = [];
  private readonly committedListeners: Array<() => void> = [];
  /** Channels by id: one entry per channel read, so no bound beyond their number. */
  private readonly channels = new Cache<string, Channel>({ capacity: Number.POSITIVE_INFINITY, ttlMs: CHANNEL_CACHE_TTL_MS });
  private readonly acceptor: GroupCommitter<PreparedMessage, MessageRow>;
  private readonly statusWriter: GroupCommitter<StatusChange, boolean>;

  constructor(
    private readonly store: Store,
    private readonly tenancy: TenancyService,
    private readonly config: TernConfig,
    private readonly logger: Logger,
  ) {
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

  /** Runs inside the transaction of every accept and status change (webhook outbox, SMPP receipts…). */
  addEventHook(hook: EventHook): void {
    this.hooks.push(hook);
  }

  onAccepted(listener: (rows: MessageRow[]) => void): void {
    this.acceptedListeners.push(listener);
  }

  /** Called after every transaction that wrote events (workers that read the outbox wake up on it). */
  onCommitted(listener: () => void): void {
    this.committedListeners.push(listener);
  }

  notifyCommitted(): void {
    for (const l of this.committedListeners) l();
  }

  /** Runs the event hooks inside a transaction of another service that wrote events (inbound messages…). */
  async runEventHooks(db: Db, events: MessageEventRow[], messages: Map<string, MessageRow>): Promise<void> {
    for (const hook of this.hooks) await hook(db, events, messages);
  }

  /**
   * A channel, cached briefly. Inside a transaction pass its executor: on SQLite the transaction holds the only
   * connection, so a read through the store would wait for itself.
   */
  async channel(id: string, db: Db = this.store.db, now = Date.now()): Promise<Channel> {
    const cached = this.channels.get(id, now);
    if (cached) return cached;
    const channel = (await findChannel(db, id)) ?? fail('NOT_FOUND', `channel ${id} not found`);
    this.channels.set(id, channel, now);
    return channel;
  }

  private async flushAccepts(batch: PreparedMessage[]): Promise<MessageRow[]> {
    const now = Date.now();
    const rows = await inTransaction(this.store, (trx) => acceptBatch(trx, this.store.dialect, batch, this.hooks, now));
    for (const l of this.acceptedListeners) l(rows);
    this.notifyCommitted();
    return rows;
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
    return { priceList: this.priceList, validitySeconds: this.config.messageValiditySeconds, now };
  }

  async sendCampaign(channel: Channel, input: CampaignInput, now = Date.now()): Promise<CampaignResult> {
    if (input.recipients.length === 0) fail('INVALID_REQUEST', 'body.recipients: at least one recipient is required');
    if (input.recipients.length > MAX_CAMPAIGN_RECIPIENTS) {
      fail('INVALID_REQUEST', `body.recipients: at most ${MAX_CAMPAIGN_RECIPIENTS} recipients per request`);
    }
    const campaignId = uuidv7(now);
    const errors: CampaignResult['errors'] = [];
    const prepared: PreparedMessage[] = [];
    const ctx = this.prepareContext(now);
    // The shared fields are checked once, so a bad body fails the whole request rather than every recipient.
    await prepareSms(channel, { ...input.message, to: '33600000000', refClient: input.refClient, source: 'CAMPAIGN', fieldPrefix: 'body.' }, ctx);
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
              fieldPrefix: 'body.',
              toField: `body.recipients[${index}].to`,
            },
            ctx,
          ),
        );
      } catch (err) {
        const e = err as { code?: string; detail?: string; message: string };
        if (!e.code) throw err;
        errors.push({ index, to: r.to, errorCode: e.code, detail: e.detail ?? e.message });
      }
    }
    const sendAt = prepared[0]?.row.send_at ?? now;
    await this.store.db
      .insertInto('campaigns')
      .values({
        id: campaignId,
        organisation_id: channel.organisationId,
        channel_id: channel.id,
        ref_client: input.refClient ?? null,
        send_at: sendAt,
        created_at: now,
        recipients: input.recipients.length,
        body: JSON.stringify({ text: input.message.text, encoding: input.message.encoding ?? null }),
      })
      .execute();
    const messages = await this.acceptor.submitMany(prepared);
    return { campaignId, messages, errors };
  }

  async campaign(campaignId: string, channelIds: string[]) {
    const c = await this.store.db.selectFrom('campaigns').selectAll().where('id', '=', campaignId).executeTakeFirst();
    if (!c || !channelIds.includes(c.channel_id)) fail('NOT_FOUND', `campaign ${campaignId} not found`);
    return { campaign: c, counts: await countByStatus(this.store.db, campaignId) };
  }

  async cancelCampaign(campaignId: string, channelIds: string[], now = Date.now()) {
    const { campaign } = await this.campaign(campaignId, channelIds);
    const scheduled = await this.store.db
      .selectFrom('messages')
      .select('id')
      .where('campaign_id', '=', campaignId)
      .where('status', '=', 'SCHEDULED')
      .execute();
    if (scheduled.length === 0) fail('CONFLICT', `campaign ${campaignId} has no scheduled message left to cancel`);
    await this.applyStatusNow(
      scheduled.map((m) => ({ messageId: m.id, status: 'CANCELLED' as const, detail: 'CANCELLED_BY_USER', at: now, refund: true })),
    );
    await this.store.db.deleteFrom('dispatch_queue').where('message_id', 'in', scheduled.map((m) => m.id)).execute();
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
    await this.store.db.deleteFrom('dispatch_queue').where('message_id', '=', id).execute();
    return applied[0]!;
  }

  /** Status changes from carriers and workers, group-committed; resolves true when the change was applied. */
  updateStatus(change: StatusChange): Promise<boolean> {
    return this.statusWriter.submit(change);
  }

  updateStatuses(changes: StatusChange[]): Promise<boolean[]> {
    return this.statusWriter.submitMany(changes);
  }

  /** Applies status changes in their own transaction right away. */
  async applyStatusNow(changes: StatusChange[]): Promise<AppliedChanges> {
    const result = await inTransaction(this.store, (trx) =>
      applyStatusChanges(trx, this.store.dialect, changes, async (cid) => (await this.channel(cid, trx)).type, this.hooks),
    );
    if (result.applied.length > 0) this.notifyCommitted();
    return result;
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
