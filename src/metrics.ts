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
    help: 'Claimed work (queue="dispatch": messages to operators, "webhooks": deliveries) a node did not send because its claim ran out first, e.g. it stalled (when="before_send": the node that claimed it next sends it), or sent but could not record because the claim ran out meanwhile (when="after_send": sent again by the new owner; an operator that does not deduplicate, or a receiver that ignores webhook-id, gets it twice)',
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

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'tern_' });
  }

  /** Statements this node has run on its database, read at each scrape. */
  watchStatements(count: () => number): void {
    new Counter({
      name: 'tern_db_statements_total',
      help: 'Statements this node ran on its database (transactions\' BEGIN and COMMIT aside); idle, only its heartbeat and the slow safety poll',
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
    const read = { at: 0, value: Promise.resolve({ created: 0, approved: 0 }) };
    const sample = () => {
      const now = Date.now();
      if (now - read.at > 500) read.value = source().catch(() => ({ created: 0, approved: 0 }));
      read.at = now;
      return read.value;
    };
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

  /** Receipts and MO waiting for an SMPP receiver, all nodes, per credential and kind (read at each scrape). */
  watchSmppOutbox(source: () => Promise<Array<{ systemId: string; kind: string; count: number }>>): void {
    new Gauge({
      name: 'tern_smpp_outbox_pending',
      help: 'Receipts and MO waiting for an SMPP receiver, per credential and kind, all nodes',
      labelNames: ['system_id', 'kind'],
      registers: [this.registry],
      async collect() {
        this.reset();
        for (const c of await source().catch(() => [])) this.set({ system_id: c.systemId, kind: c.kind }, c.count);
      },
    });
  }

  /**
   * Connector metrics, read from `source` at each scrape: state, binds, window, what went through, errors by code,
   * submits whose outcome was lost, and the age of the oldest message waiting for each connector.
   */
  watchConnectors(source: () => Promise<ConnectorSample[]>): void {
    const samples = { at: 0, value: Promise.resolve([] as ConnectorSample[]) };
    // One read of the source per scrape, shared by every metric.
    const read = () => {
      const now = Date.now();
      if (now - samples.at > 500) samples.value = source().catch(() => []);
      samples.at = now;
      return samples.value;
    };
    const registers = [this.registry];
    const gauge = (name: string, help: string, labelNames: string[], fill: (g: Gauge<string>, s: ConnectorSample) => void) =>
      new Gauge({
        name,
        help,
        labelNames,
        registers,
        async collect() {
          this.reset();
          for (const s of await read()) fill(this, s);
        },
      });
    gauge('tern_connector_up', 'Connector state on this node (1 for the current state)', ['connector', 'state'], (g, s) => g.set({ connector: s.name, state: s.state }, 1));
    gauge('tern_connector_binds', 'Connections bound on this node', ['connector'], (g, s) => s.binds !== null && g.set({ connector: s.name }, s.binds));
    gauge('tern_connector_in_flight', 'Submits sent and not answered yet', ['connector'], (g, s) => s.inFlight !== null && g.set({ connector: s.name }, s.inFlight));
    gauge('tern_connector_submits_total', 'Messages submitted since start, by outcome', ['connector', 'outcome'], (g, s) => {
      g.set({ connector: s.name, outcome: 'accepted' }, s.counters.accepted);
      g.set({ connector: s.name, outcome: 'temporary_error' }, s.counters.temporaryErrors);
      g.set({ connector: s.name, outcome: 'permanent_error' }, s.counters.permanentErrors);
    });
    gauge('tern_connector_errors_total', 'Refusals since start, by code', ['connector', 'code'], (g, s) => {
      for (const [code, n] of Object.entries(s.counters.errorsByCode)) g.set({ connector: s.name, code }, n);
    });
    gauge('tern_connector_receipts_total', 'Receipts received since start', ['connector'], (g, s) => g.set({ connector: s.name }, s.counters.receipts));
    gauge('tern_connector_inbound_total', 'Inbound messages received since start', ['connector'], (g, s) => g.set({ connector: s.name }, s.counters.inbound));
    gauge('tern_connector_unknown_outcomes_total', 'Submits whose outcome was lost with a connection (they may arrive twice)', ['connector'], (g, s) =>
      g.set({ connector: s.name }, s.unknownOutcomes),
    );
    gauge('tern_connector_repeats_recognised_total', 'Submits repeated after a crash or a lost answer that the upstream recognised and did not send again', ['connector'], (g, s) =>
      g.set({ connector: s.name }, s.repeatsRecognised),
    );
    gauge('tern_connector_oldest_queued_seconds', 'Age of the oldest message waiting for the connector', ['connector'], (g, s) => s.oldestQueuedSeconds !== null && g.set({ connector: s.name }, s.oldestQueuedSeconds));
  }
}
