import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

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
  readonly smppOutboxPending = new Gauge({
    name: 'tern_smpp_outbox_pending',
    help: 'Receipts and MO waiting for an SMPP receiver, per credential and kind',
    labelNames: ['system_id', 'kind'] as const,
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'tern_' });
  }
}
