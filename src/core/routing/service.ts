import { sql } from 'kysely';
import { HIGH_LANE, type Lane, toLane } from '../../domain/fair-queue.ts';
import { type RouteMatch, type RouteRule, type RouteStrategy, toStrategy, type WeightedConnector } from '../../domain/routing.ts';
import type { Rate } from '../../domain/rates.ts';
import { type ConnectorRateRow, listRateRows } from '../../store/rates.ts';
import type { CarrierEvent, CarrierEventSink, ConnectorContext, ConnectorLogger, ConnectorRecord, ConnectorState } from '../ports.ts';
import type { Store } from '../../store/db.ts';
import {
  type ConnectorRecordRow,
  findRecords,
  listConnectorRows,
  listRecordsByPrefix,
  listRouteRows,
  pruneSettledRecords,
  settleRecords,
  upsertRecords,
} from '../../store/connectors.ts';
import { CONNECTOR_RECORD_QUEUE, DISPATCH_QUEUE, LeasedQueue } from '../../store/queue.ts';
import { oldestWaiting, releaseWaiting } from '../../store/dispatch.ts';
import { inTransaction } from '../../store/db.ts';
import type { Cluster } from '../cluster.ts';
import type { SlidingSecondLimiter } from '../sliding-rate.ts';
import type { SecretBox } from '../secrets.ts';

/** How long connectors' settled records are kept: the longest validity a message may have, and a day. */
const RECORDS_KEPT_MS = 31 * 86_400_000;

/** The embedded simulated network's connector, which the simulator's operator tools speak for. */
export const DEFAULT_SIMULATOR = 'simulator';

/** Where a definition comes from: the embedded defaults, the admin API, or the configuration file. */
export type DefinitionSource = 'DEFAULT' | 'API' | 'CONFIG';

/** One operator connection as data: the registry turns it into a live connector with its kind's factory. */
export interface ConnectorDefinition {
  id: string;
  name: string;
  kind: string;
  settings: Record<string, unknown>;
  /** Opened for the connector; never shown by the API. */
  secrets: Record<string, string>;
  source: DefinitionSource;
  enabled: boolean;
}

export interface RouteDefinition extends RouteRule {
  /** Micro-euros per part, or null: what a part costs through a connector with no rate for it. */
  costPerPart: number | null;
  /** How the route chooses among its connectors. */
  strategy: RouteStrategy;
  /** Whether it may place a message whose cost is above what was charged for it. */
  allowLoss: boolean;
  /** Connectors a message is placed with at most, counting re-routes after a failed delivery. */
  maxAttempts: number;
  /** Connectors delivering less than this (0 to 1) are left out, unless all do; null: none. */
  minDeliveryRate: number | null;
  /** A live lookup before each send through it: an unreachable or invalid number ends UNDELIVERABLE unsent. */
  lookupBeforeSend: boolean;
  source: DefinitionSource;
  enabled: boolean;
}

export function toRate(r: ConnectorRateRow): Rate {
  return {
    id: r.id,
    connectorId: r.connector_id,
    type: r.type,
    prefix: r.prefix,
    country: r.country,
    mccMnc: r.mcc_mnc,
    amount: Number(r.amount),
    validFrom: Number(r.valid_from),
    validTo: r.valid_to === null ? null : Number(r.valid_to),
  };
}

/** A connector's record that fell due, claimed for this node. */
export interface DueRecord {
  connector: string;
  record: ConnectorRecord;
}

function toRecord(r: ConnectorRecordRow): ConnectorRecord {
  return { key: r.key, data: JSON.parse(r.data) as Record<string, unknown>, dueAt: r.due_at === null ? null : Number(r.due_at), lane: toLane(r.lane) };
}

/**
 * Operator connections and routes as data, and what the core gives a running connector: where its receipts and
 * inbound messages go (applied durably before `emit` resolves), its durable records, and its health for the router.
 */
export interface ConnectorServiceOptions {
  box: SecretBox;
  /** Connectors' `tps`: held in every sliding second, for the whole cluster. */
  pace: SlidingSecondLimiter;
  cluster: Cluster;
  /** Base URL Tern answers on (for operators' callbacks to connector routes). */
  publicBase: () => string;
}

/**
 * This node's timers taking records as they are written due now (a receipt a simulated network owes at once), when
 * they have room and their lane nothing older waiting: written already leased to them and handed over in memory
 * once stored — no claim. A crash leaves them to be claimed when the lease runs out.
 */
export interface RecordHandoff {
  /** Room for one record of `lane` now: the lease to write it with, or null. Each is taken or released. */
  reserve(lane: Lane, now: number): number | null;
  /** Records reserved and stored, of one connector and lane. */
  take(connector: string, lane: Lane, records: ConnectorRecord[]): void;
  /** Records reserved that were not stored. */
  release(lane: Lane, count: number): void;
}

export class ConnectorService {
  private apply: () => Promise<void> = async () => undefined;
  readonly records: LeasedQueue<ConnectorRecordRow>;
  /** Told, on this node, the lanes records were just written due in: this node's timers take them. */
  private recordsDue: (lanes: ReadonlySet<Lane>) => void = () => undefined;
  private handoff: RecordHandoff | null = null;

  constructor(
    private readonly store: Store,
    private readonly sink: CarrierEventSink,
    private readonly opts: ConnectorServiceOptions,
  ) {
    this.records = new LeasedQueue(store, CONNECTOR_RECORD_QUEUE);
  }

  async definitions(): Promise<{ connectors: ConnectorDefinition[]; routes: RouteDefinition[]; rates: Rate[] }> {
    const [connectors, routes, rates] = await Promise.all([listConnectorRows(this.store.db), listRouteRows(this.store.db), listRateRows(this.store.db)]);
    return {
      connectors: connectors.map((c) => ({
        id: c.id,
        name: c.name,
        kind: c.kind,
        settings: JSON.parse(c.settings) as Record<string, unknown>,
        secrets: Object.fromEntries(
          Object.entries(c.secrets ? (JSON.parse(c.secrets) as Record<string, string>) : {}).map(([k, v]) => [k, this.opts.box.open(v)]),
        ),
        source: c.source as DefinitionSource,
        enabled: c.enabled === 1,
      })),
      routes: routes.map((r) => ({
        id: r.id,
        name: r.name,
        priority: r.priority,
        match: JSON.parse(r.match) as RouteMatch,
        connectors: JSON.parse(r.connectors) as WeightedConnector[],
        failover: JSON.parse(r.failover) as string[],
        costPerPart: r.cost_per_part === null ? null : Number(r.cost_per_part),
        lookupBeforeSend: Number(r.lookup_before_send) === 1,
        strategy: toStrategy(r.strategy),
        allowLoss: Number(r.allow_loss) === 1,
        maxAttempts: Number(r.max_attempts),
        minDeliveryRate: r.min_delivery_rate === null ? null : Number(r.min_delivery_rate) / 10_000,
        source: r.source as DefinitionSource,
        enabled: r.enabled === 1,
      })),
      rates: rates.map(toRate),
    };
  }

  /**
   * Records written on this node with a due time are handed over by this node's timers, in their lane (other nodes
   * are not told: the writer is awake and has them at hand; the safety poll finds what a stopped node left).
   */
  onRecordsDue(listener: (lanes: ReadonlySet<Lane>) => void): void {
    this.recordsDue = listener;
  }

  /** This node's timers, to take records written due now. */
  handRecordsTo(handoff: RecordHandoff): void {
    this.handoff = handoff;
  }

  /** Called when connectors or routes were changed (on this node or, on PostgreSQL, another one). */
  onChange(listener: () => void): () => void {
    return this.store.signals.on('config', listener);
  }

  /** How this node's running connectors and routes are brought in line with their definitions, once they run. */
  applyWith(apply: () => Promise<void>): void {
    this.apply = apply;
  }

  /**
   * Brings this node's running connectors and routes in line with a change it just committed, before the change is
   * answered: the next request here sees it (other nodes follow the `config` signal). A failure is the reload's to
   * tell (it is tried again at the signal); the change stands.
   */
  async applyHere(): Promise<void> {
    await this.apply().catch(() => undefined);
  }

  /** The context of a running connector. */
  context(name: string, logger: ConnectorLogger, health: (state: ConnectorState, lastError: string | null) => void): ConnectorContext {
    const store = this.store;
    return {
      name,
      logger,
      emit: (events) => this.sink(events),
      health: (state, lastError = null) => health(state, lastError),
      throttle: async (units, perSecond) => {
        if (perSecond <= 0) return { ok: true };
        return this.opts.pace.take(`connector-tps:${name}`, units, perSecond);
      },
      slots: (total) => this.opts.cluster.slots(name, total),
      publicUrl: () => `${this.opts.publicBase().replace(/\/$/, '')}/connectors/${encodeURIComponent(name)}`,
      records: {
        async get(keys) {
          if (keys.length === 0) return new Map();
          return new Map((await findRecords(store.db, name, keys)).map((r) => [r.key, toRecord(r)]));
        },
        put: async (records) => {
          if (records.length === 0) return;
          const now = Date.now();
          const handoff = this.handoff;
          const handed = new Map<Lane, ConnectorRecord[]>();
          const rows = records.map((r) => {
            const lane = r.lane ?? HIGH_LANE;
            const lease = handoff && r.dueAt !== null && r.dueAt <= now ? handoff.reserve(lane, now) : null;
            if (lease !== null) {
              const list = handed.get(lane);
              if (list) list.push(r);
              else handed.set(lane, [r]);
            }
            return { connector: name, key: r.key, data: JSON.stringify(r.data), due_at: r.dueAt, lease_until: lease, created_at: now, lane };
          });
          try {
            await upsertRecords(store.db, rows);
          } catch (err) {
            for (const [lane, list] of handed) handoff!.release(lane, list.length);
            throw err;
          }
          for (const [lane, list] of handed) handoff!.take(name, lane, list);
          const lanes = new Set(rows.filter((r) => r.due_at !== null && r.lease_until === null).map((r) => r.lane));
          if (lanes.size > 0) this.recordsDue(lanes);
        },
        async list(prefix, limit) {
          return (await listRecordsByPrefix(store.db, store.dialect, name, prefix, limit)).map(toRecord);
        },
      },
    };
  }

  /**
   * Forgets what connectors keep of messages long past any validity (30 days at most, a day of margin): a receipt
   * cannot come for them any more, nor a repeated submit.
   */
  pruneRecords(now = Date.now(), keepMs = RECORDS_KEPT_MS): Promise<number> {
    return pruneSettledRecords(this.store.db, now - keepMs);
  }

  /** Records of every connector that fell due in `lane`, reserved for `leaseMs` to this node, and when the lane's next one falls due. */
  async claimDue(now: number, limit: number, leaseMs: number, lane: Lane): Promise<{ due: DueRecord[]; nextDue: number | null }> {
    const { rows, nextDue } = await this.records.claimWithNextDue({ now, limit, leaseMs, where: sql`lane = ${lane}` });
    // A claim answers its rows in no particular order: oldest first, as they fell due.
    const due = rows.map((r) => ({ connector: r.connector, record: toRecord(r) })).sort((a, b) => (a.record.dueAt ?? 0) - (b.record.dueAt ?? 0));
    return { due, nextDue };
  }

  /** After a connector dealt with its due records: the ones it returned keep their new due time, the rest none. */
  async settleDue(connector: string, handled: string[], kept: ConnectorRecord[]): Promise<void> {
    const keptKeys = new Set(kept.map((r) => r.key));
    await settleRecords(
      this.store.db,
      connector,
      handled.filter((k) => !keptKeys.has(k)),
    );
    if (kept.length > 0) await this.context(connector, silent, () => undefined).records.put(kept);
  }

  /** A connector came up (on this node): the messages backed off while waiting for it go now, not at their backoff's end. */
  async releaseWaiting(connector: string, now = Date.now()): Promise<number> {
    return inTransaction(this.store, async (trx) => {
      const n = await releaseWaiting(trx, connector, now);
      if (n > 0) await new LeasedQueue(this.store, DISPATCH_QUEUE).wake(trx);
      return n;
    });
  }

  /** For each connector messages wait for, since when the oldest of them was due to go. */
  oldestWaiting(): Promise<Map<string, number>> {
    return oldestWaiting(this.store.db);
  }

  /** Events on behalf of a connector (the simulator's operator tools): applied like the connector's own. */
  inject(connector: string, events: Array<WithoutConnector<CarrierEvent>>): Promise<void> {
    return this.sink(events.map((e) => ({ ...e, connector }) as CarrierEvent));
  }
}

type WithoutConnector<T> = T extends unknown ? Omit<T, 'connector'> : never;

const silent: ConnectorLogger = { debug() {}, info() {}, warn() {}, error() {} };
