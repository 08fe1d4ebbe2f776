import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/** One connector as the metrics see it. */
export interface ConnectorSample {
  name: string;
  state: string;
  binds: number | null;
  inFlight: number | null;
  unknownOutcomes: number;
  repeatsRecognised: number;
  oldestQueuedSeconds: number | null;
  counters: { accepted: number; temporaryErrors: number; permanentErrors: number; errorsByCode: Record<string, number>; receipts: number; inbound: number };
}

/** One queue's backlog, all nodes: rows waiting, and how late the oldest one that is due is (null: none is due). */
export interface QueueSample {
  queue: string;
  depth: number;
  oldestDueSeconds: number | null;
}

/** What a webhook attempt came to: delivered, or failed and retried later, or failed for good (and how). */
export type WebhookOutcome = 'delivered' | 'retry' | 'failed' | 'gone' | 'refused';

/** A message's first final status, as its transaction committed. */
export interface SettledMessage {
  /** Its channel's type. */
  type: string;
  status: string;
  /** Seconds from when it was due to be sent to its final status; null when it was final at accept. */
  afterSeconds: number | null;
}

interface Cell {
  labels: Record<string, string>;
  value: number;
}

/**
 * A counter of one or two labels whose series are plain numbers where things happen — a lookup of the labels' cell
 * and an addition, no hashing of a label set per increment — written into the counter at each scrape.
 */
class Tally {
  private readonly cells = new Map<string, Map<string, Cell>>();

  constructor(
    registry: Registry,
    name: string,
    help: string,
    private readonly labelNames: readonly [string] | readonly [string, string],
  ) {
    const cells = this.cells;
    new Counter({
      name,
      help,
      labelNames: [...labelNames],
      registers: [registry],
      collect() {
        this.reset();
        for (const byFirst of cells.values()) for (const c of byFirst.values()) this.inc(c.labels, c.value);
      },
    });
  }

  /** Adds `n` to the series of these label values (`second` for a counter of two labels). */
  add(n: number, first: string, second = ''): void {
    let byFirst = this.cells.get(first);
    if (!byFirst) this.cells.set(first, (byFirst = new Map()));
    const cell = byFirst.get(second);
    if (cell) {
      cell.value += n;
      return;
    }
    const labels: Record<string, string> = { [this.labelNames[0]]: first };
    if (this.labelNames[1] !== undefined) labels[this.labelNames[1]] = second;
    byFirst.set(second, { labels, value: n });
  }
}

/**
 * A source read once for all the metrics of a scrape: a read less than half a second after the last one (the other
 * metrics of the same scrape) gets its answer; a failed read answers `fallback`.
 */
function readOncePerScrape<T>(source: () => Promise<T>, fallback: T): () => Promise<T> {
  let at = Number.NEGATIVE_INFINITY;
  let value: Promise<T> = Promise.resolve(fallback);
  return () => {
    const now = Date.now();
    if (now - at > 500) {
      at = now;
      value = source().catch(() => fallback);
    }
    return value;
  };
}

/** Gauges of the client library's default metrics whose names end in `_total`, which only counters may. */
const GAUGES_NAMED_LIKE_COUNTERS = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'];
const CHANNEL_TYPES = ['SMS', 'RCS', 'VOICE'];
const FINAL_STATUSES = ['DELIVERED', 'UNDELIVERABLE', 'UNDELIVERED', 'READ', 'CANCELLED'];
const WEBHOOK_OUTCOMES: readonly WebhookOutcome[] = ['delivered', 'retry', 'failed', 'gone', 'refused'];

/**
 * A histogram without labels whose observations are an addition to a bucket's count (prom-client's own hashes a label
 * set and checks its value at each one, ten times the cost), exposed as a histogram at each scrape.
 */
class BucketTally {
  readonly type = 'histogram';
  private readonly counts: Float64Array;
  private sum = 0;
  private count = 0;

  constructor(
    registry: Registry,
    readonly name: string,
    readonly help: string,
    private readonly bounds: readonly number[],
  ) {
    this.counts = new Float64Array(bounds.length);
    registry.registerMetric(this as unknown as Histogram);
  }

  observe(value: number): void {
    this.sum += value;
    this.count++;
    const bounds = this.bounds;
    for (let i = 0; i < bounds.length; i++) {
      if (value <= bounds[i]!) {
        this.counts[i]!++;
        return;
      }
    }
  }

  reset(): void {
    this.counts.fill(0);
    this.sum = 0;
    this.count = 0;
  }

  async get() {
    const values: Array<{ labels: Record<string, string | number>; value: number; metricName: string }> = [];
    let cumulative = 0;
    for (let i = 0; i < this.bounds.length; i++) {
      cumulative += this.counts[i]!;
      values.push({ labels: { le: this.bounds[i]! }, value: cumulative, metricName: `${this.name}_bucket` });
    }
    values.push({ labels: { le: '+Inf' }, value: this.count, metricName: `${this.name}_bucket` });
    values.push({ labels: {}, value: this.sum, metricName: `${this.name}_sum` });
    values.push({ labels: {}, value: this.count, metricName: `${this.name}_count` });
    return { name: this.name, help: this.help, type: this.type, values, aggregator: 'sum' as const };
  }
}

/** One registry per server instance, so several instances can live in one process (tests). */
export class Metrics {
  readonly registry = new Registry();
  readonly httpRequests = new Counter({
    name: 'tern_http_requests_total',
    help: 'HTTP requests answered, by route and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });
  readonly httpDuration = new Histogram({
    name: 'tern_http_request_duration_seconds',
    help: 'HTTP request duration',
    labelNames: ['method', 'route'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });
  readonly smppBinds = new Counter({
    name: 'tern_smpp_binds_total',
    help: 'SMPP binds accepted, per credential and mode',
    labelNames: ['system_id', 'mode'] as const,
    registers: [this.registry],
  });
  readonly smppBindFailures = new Counter({
    name: 'tern_smpp_bind_failures_total',
    help: 'SMPP binds refused, per system_id and command_status',
    labelNames: ['system_id', 'status'] as const,
    registers: [this.registry],
  });
  readonly smppSubmits = new Counter({
    name: 'tern_smpp_submits_total',
    help: 'Messages accepted over SMPP (a concatenated message counts once)',
    labelNames: ['system_id'] as const,
    registers: [this.registry],
  });
  readonly smppSubmitParts = new Counter({
    name: 'tern_smpp_submit_parts_total',
    help: 'submit_sm PDUs received (each part of a concatenated message)',
    labelNames: ['system_id'] as const,
    registers: [this.registry],
  });
  readonly smppErrors = new Counter({
    name: 'tern_smpp_errors_total',
    help: 'SMPP requests answered with an error, per command and command_status',
    labelNames: ['system_id', 'command', 'status', 'reason'] as const,
    registers: [this.registry],
  });
  readonly smppThrottled = new Counter({
    name: 'tern_smpp_throttled_total',
    help: 'Submits refused with ESME_RTHROTTLED above the credential TPS',
    labelNames: ['system_id'] as const,
    registers: [this.registry],
  });
  readonly smppDelivers = new Counter({
    name: 'tern_smpp_delivers_total',
    help: 'deliver_sm sent (receipts and MO), per outcome',
    labelNames: ['system_id', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly smppSessions = new Gauge({
    name: 'tern_smpp_sessions',
    help: 'SMPP sessions bound, per credential',
    labelNames: ['system_id'] as const,
    registers: [this.registry],
  });
  readonly fenced = new Counter({
    name: 'tern_fenced_total',
    help: 'Claimed work (queue="dispatch": messages to operators, "webhooks": deliveries) a node did not send because its claim ran out first, e.g. it stalled (when="before_send": the node that claimed it next sends it), or sent and to be sent again (when="after_send": its outcome could not be recorded because the claim ran out meanwhile, and the new owner sends it; or no answer came to its submit, a connection lost or an answer timed out; an operator that does not deduplicate, or a receiver that ignores webhook-id, gets it twice)',
    labelNames: ['queue', 'when'] as const,
    registers: [this.registry],
  });
  readonly dispatchTakenOver = new Counter({
    name: 'tern_dispatch_taken_over_total',
    help: 'Messages claimed again after another claim ran out (a node died or stalled): each may have reached the operator twice',
    registers: [this.registry],
  });

  readonly authFailures = new Counter({
    name: 'tern_auth_failures_total',
    help: 'Failed authentications (unknown or missing keys, wrong SMPP passwords), by door',
    labelNames: ['door'],
    registers: [this.registry],
  });

  readonly authLockouts = new Counter({
    name: 'tern_auth_lockouts_total',
    help: 'Client addresses and SMPP system_ids locked out after too many failed authentications',
    labelNames: ['door'],
    registers: [this.registry],
  });

  readonly rateLimited = new Counter({
    name: 'tern_rate_limited_total',
    help: 'Requests refused with 429 for going past a traffic limit, by route group',
    labelNames: ['group'],
    registers: [this.registry],
  });

  readonly turnsWaited = new Counter({
    name: 'tern_requests_waited_turn_total',
    help: 'Requests that waited for their organisation’s turn on this node (TERN_ORGANISATION_CONCURRENCY) while other organisations had requests in progress',
    registers: [this.registry],
  });

  readonly otpSent = new Counter({
    name: 'tern_otp_sent_total',
    help: 'One-time password codes sent (first sends, resends and voice fallbacks), by channel',
    labelNames: ['channel'],
    registers: [this.registry],
  });

  readonly otpChecks = new Counter({
    name: 'tern_otp_checks_total',
    help: 'Checks of one-time password codes, by result (APPROVED, WRONG_CODE, CANCELLED by the last wrong code, EXPIRED, NOT_PENDING)',
    labelNames: ['result'],
    registers: [this.registry],
  });

  readonly otpSettled = new Counter({
    name: 'tern_otp_settled_total',
    help: 'One-time passwords that ended, by status (APPROVED, EXPIRED, CANCELLED)',
    labelNames: ['status'],
    registers: [this.registry],
  });

  readonly fraudBlocked = new Counter({
    name: 'tern_fraud_blocked_total',
    help: 'Messages a fraud guard stopped at accept (UNDELIVERABLE, not charged), by guard (country, velocity)',
    labelNames: ['guard'],
    registers: [this.registry],
  });

  readonly fraudAlerts = new Counter({
    name: 'tern_fraud_alerts_total',
    help: 'Alerts raised by fraud guards (the first message a velocity window stopped), by guard',
    labelNames: ['guard'],
    registers: [this.registry],
  });

  private readonly messagesAccepted = new Tally(
    this.registry,
    'tern_messages_accepted_total',
    'Messages this node accepted and stored (those refused at accept, e.g. for want of credit, included), by channel type',
    ['type'],
  );

  private readonly messagesFinal = new Tally(
    this.registry,
    'tern_messages_final_total',
    'Messages that reached their final status on this node (DELIVERED, UNDELIVERABLE, UNDELIVERED, READ, CANCELLED), once per message: a READ after DELIVERED is not counted again; by channel type and status',
    ['type', 'status'],
  );

  private readonly timeToFinal = new BucketTally(
    this.registry,
    'tern_message_time_to_final_seconds',
    'Time from when a message was due to be sent to its final status, for the messages that reached it on this node after their accept',
    [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 21600, 86400],
  );

  private readonly webhookDeliveries = new Tally(
    this.registry,
    'tern_webhook_deliveries_total',
    'Webhook attempts this node made, by outcome: delivered; retry (failed, tried again later); failed (failed, no retry left); gone (410); refused (the URL may not be called)',
    ['outcome'],
  );

  constructor() {
    // The client library's process and Node.js metrics, under their standard names (process_cpu_seconds_total, …),
    // but for its three gauges named like counters: their per-type series (nodejs_active_handles{type}, …) stay,
    // and sum to what they said.
    collectDefaultMetrics({ register: this.registry });
    for (const name of GAUGES_NAMED_LIKE_COUNTERS) this.registry.removeSingleMetric(name);
    // Every series of the message and webhook counters from the start, so that rates and alerts have them at 0.
    for (const type of CHANNEL_TYPES) {
      this.messagesAccepted.add(0, type);
      for (const status of FINAL_STATUSES) this.messagesFinal.add(0, type, status);
    }
    for (const outcome of WEBHOOK_OUTCOMES) this.webhookDeliveries.add(0, outcome);
  }

  /** Messages an accept stored, by their channel's type (called once their transaction committed). */
  countAccepted(types: readonly string[]): void {
    for (const type of types) this.messagesAccepted.add(1, type);
  }

  /** Messages that reached their first final status (called once their transaction committed). */
  countSettled(settled: readonly SettledMessage[]): void {
    for (const m of settled) {
      this.messagesFinal.add(1, m.type, m.status);
      if (m.afterSeconds !== null) this.timeToFinal.observe(Math.max(0, m.afterSeconds));
    }
  }

  /** Webhook attempts, by what they came to. */
  countWebhookOutcomes(outcomes: readonly WebhookOutcome[]): void {
    for (const outcome of outcomes) this.webhookDeliveries.add(1, outcome);
  }

  /** Whether the database answers, tried at each scrape (what /readyz says). */
  watchDatabase(ping: () => Promise<unknown>): void {
    new Gauge({
      name: 'tern_db_up',
      help: 'Whether the database answered this node at the scrape (1) or not (0): what /readyz says',
      registers: [this.registry],
      async collect() {
        const up = await ping().then(
          () => 1,
          () => 0,
        );
        this.set(up);
      },
    });
  }

  /** The backlog of the work queues, all nodes (read from the database at each scrape, one statement). */
  watchQueues(source: () => Promise<QueueSample[]>, depthCap: number): void {
    const read = readOncePerScrape(source, []);
    const registers = [this.registry];
    new Gauge({
      name: 'tern_queue_depth',
      help: `Rows waiting in a work queue, all nodes (the same on every node), counted up to ${depthCap}: dispatch (messages to send, scheduled ones included), webhooks (pending deliveries), smpp_outbox (receipts and MO for SMPP clients), connector_records (what connectors owe or poll for), unmatched_receipts (receipts waiting for their message)`,
      labelNames: ['queue'],
      registers,
      async collect() {
        const list = await read();
        this.reset();
        for (const q of list) this.set({ queue: q.queue }, q.depth);
      },
    });
    new Gauge({
      name: 'tern_queue_oldest_due_seconds',
      help: 'How long the oldest row of a work queue that is due has been due, all nodes (0 when none is due): a backlog that is not draining grows it',
      labelNames: ['queue'],
      registers,
      async collect() {
        const list = await read();
        this.reset();
        for (const q of list) this.set({ queue: q.queue }, q.oldestDueSeconds ?? 0);
      },
    });
  }

  /** Statements this node has run on its database, read at each scrape. */
  watchStatements(count: () => number): void {
    new Counter({
      name: 'tern_db_statements_total',
      help: "Statements this node ran on its database (transactions' BEGIN and COMMIT aside); idle, only its heartbeat and the slow safety poll",
      registers: [this.registry],
      collect() {
        this.reset();
        this.inc(count());
      },
    });
  }

  /**
   * One-time passwords of the whole cluster (read from the database at each scrape): those created in the last 24
   * hours, and the share of them that were approved.
   */
  watchOtp(source: () => Promise<{ created: number; approved: number }>): void {
    const registers = [this.registry];
    const sample = readOncePerScrape(source, { created: 0, approved: 0 });
    new Gauge({
      name: 'tern_otp_created_24h',
      help: 'One-time passwords created in the last 24 hours, all nodes',
      registers,
      async collect() {
        this.set((await sample()).created);
      },
    });
    new Gauge({
      name: 'tern_otp_conversion_ratio',
      help: 'Share of the one-time passwords created in the last 24 hours that were approved, all nodes (0 when none were created)',
      registers,
      async collect() {
        const { created, approved } = await sample();
        this.set(created === 0 ? 0 : approved / created);
      },
    });
  }

  /** This node's sockets to webhook receivers (idle ones included) and attempts in flight, read at each scrape. */
  watchWebhookSockets(source: () => { sockets: number; active: number }): void {
    new Gauge({
      name: 'tern_webhook_sockets',
      help: 'Sockets this node has open to webhook receivers, idle ones kept for the next attempt included (at most TERN_WEBHOOK_SOCKETS)',
      registers: [this.registry],
      collect() {
        this.set(source().sockets);
      },
    });
    new Gauge({
      name: 'tern_webhook_attempts_in_flight',
      help: 'Webhook attempts this node has in flight; others wait their turn, organisation by organisation',
      registers: [this.registry],
      collect() {
        this.set(source().active);
      },
    });
  }

  /** Receipts and MO waiting for an SMPP receiver, all nodes, per credential and kind (read at each scrape). */
  watchSmppOutbox(source: () => Promise<Array<{ systemId: string; kind: string; count: number }>>): void {
    new Gauge({
      name: 'tern_smpp_outbox_pending',
      help: 'Receipts and MO waiting for an SMPP receiver, per credential and kind, all nodes',
      labelNames: ['system_id', 'kind'],
      registers: [this.registry],
      async collect() {
        const list = await source().catch(() => []);
        this.reset();
        for (const c of list) this.set({ system_id: c.systemId, kind: c.kind }, c.count);
      },
    });
  }

  /**
   * Connector metrics, read from `source` at each scrape: state, binds, window, what went through, errors by code,
   * submits whose outcome was lost, and the age of the oldest message waiting for each connector.
   */
  /**
   * Delivery rate and mean time to DELIVERED per connector and destination network, over the window routes judge on
   * (from the cluster's receipt counters, as this node last read them).
   */
  watchDeliveryQuality(
    source: () => Promise<Array<{ connector: string; network: string; deliveryRate: number | null; meanTimeToDeliveredMs: number | null }>>,
  ): void {
    const read = readOncePerScrape(source, []);
    const registers = [this.registry];
    new Gauge({
      name: 'tern_connector_delivery_rate',
      help: 'Share of final receipts that were DELIVERED, per connector and destination network (last hour)',
      labelNames: ['connector', 'network'],
      registers,
      async collect() {
        const list = await read();
        this.reset();
        for (const q of list) if (q.deliveryRate !== null) this.set({ connector: q.connector, network: q.network }, q.deliveryRate);
      },
    });
    new Gauge({
      name: 'tern_connector_time_to_delivered_seconds',
      help: 'Mean time from placement to DELIVERED, per connector and destination network (last hour)',
      labelNames: ['connector', 'network'],
      registers,
      async collect() {
        const list = await read();
        this.reset();
        for (const q of list) if (q.meanTimeToDeliveredMs !== null) this.set({ connector: q.connector, network: q.network }, q.meanTimeToDeliveredMs / 1000);
      },
    });
  }

  watchConnectors(source: () => Promise<ConnectorSample[]>): void {
    const read = readOncePerScrape(source, []);
    const registers = [this.registry];
    // Each reads the source first and then fills its series at once: a scrape running beside another never sees half.
    const gauge = (name: string, help: string, labelNames: string[], fill: (g: Gauge<string>, s: ConnectorSample) => void) =>
      new Gauge({
        name,
        help,
        labelNames,
        registers,
        async collect() {
          const list = await read();
          this.reset();
          for (const s of list) fill(this, s);
        },
      });
    // Counts since the connector started on this node (a restart of it starts them again, as a counter may).
    const counter = (name: string, help: string, labelNames: string[], fill: (c: Counter<string>, s: ConnectorSample) => void) =>
      new Counter({
        name,
        help,
        labelNames,
        registers,
        async collect() {
          const list = await read();
          this.reset();
          for (const s of list) fill(this, s);
        },
      });
    gauge('tern_connector_up', 'Connector state on this node (1 for the current state)', ['connector', 'state'], (g, s) =>
      g.set({ connector: s.name, state: s.state }, 1),
    );
    gauge('tern_connector_binds', 'Connections bound on this node', ['connector'], (g, s) => s.binds !== null && g.set({ connector: s.name }, s.binds));
    gauge(
      'tern_connector_in_flight',
      'Submits sent and not answered yet',
      ['connector'],
      (g, s) => s.inFlight !== null && g.set({ connector: s.name }, s.inFlight),
    );
    counter(
      'tern_connector_submits_total',
      'Messages this node submitted to the connector, by outcome (accepted, temporary_error, permanent_error)',
      ['connector', 'outcome'],
      (c, s) => {
        c.inc({ connector: s.name, outcome: 'accepted' }, s.counters.accepted);
        c.inc({ connector: s.name, outcome: 'temporary_error' }, s.counters.temporaryErrors);
        c.inc({ connector: s.name, outcome: 'permanent_error' }, s.counters.permanentErrors);
      },
    );
    counter('tern_connector_errors_total', 'Submits the connector refused on this node, by code', ['connector', 'code'], (c, s) => {
      for (const [code, n] of Object.entries(s.counters.errorsByCode)) c.inc({ connector: s.name, code }, n);
    });
    counter('tern_connector_receipts_total', 'Delivery receipts the connector received on this node', ['connector'], (c, s) =>
      c.inc({ connector: s.name }, s.counters.receipts),
    );
    counter('tern_connector_inbound_total', 'Inbound messages (MO) the connector received on this node', ['connector'], (c, s) =>
      c.inc({ connector: s.name }, s.counters.inbound),
    );
    counter('tern_connector_unknown_outcomes_total', 'Submits whose outcome was lost with a connection (they may arrive twice)', ['connector'], (c, s) =>
      c.inc({ connector: s.name }, s.unknownOutcomes),
    );
    counter(
      'tern_connector_repeats_recognised_total',
      'Submits repeated after a crash or a lost answer that the upstream recognised and did not send again',
      ['connector'],
      (c, s) => c.inc({ connector: s.name }, s.repeatsRecognised),
    );
    gauge(
      'tern_connector_oldest_queued_seconds',
      'Age of the oldest message waiting for the connector',
      ['connector'],
      (g, s) => s.oldestQueuedSeconds !== null && g.set({ connector: s.name }, s.oldestQueuedSeconds),
    );
  }
}
