import type { Router } from '../connectors/router.ts';
import type { SimulatorCarrier } from '../connectors/simulator/sms.ts';
import type { TernConfig } from '../config.ts';
import type { Metrics } from '../metrics.ts';
import type { Store } from '../store/db.ts';
import type { AuthService } from './tenancy/auth.ts';
import type { BlacklistService } from './tenancy/blacklist.ts';
import type { ConsumptionService } from './billing/consumption.ts';
import type { FundsService } from './billing/funds.ts';
import type { IdempotencyService } from './idempotency.ts';
import type { RcsService } from './rcs/service.ts';
import type { MessagingService } from './messaging/service.ts';
import type { LookupService } from './lookup/service.ts';
import type { TenancyService } from './tenancy/service.ts';
import type { WebhookOutbox } from './webhooks/outbox.ts';
import type { WebhookDeliveries } from './webhooks/deliveries.ts';
import type { InboundService } from './messaging/inbound.ts';
import type { VoiceService } from './voice/service.ts';
import type { LegacyService } from '../doors/legacy/service.ts';
import type { SmppGateway } from '../doors/smpp/gateway.ts';

/** Every service, built once by the composition root and shared by all doors (REST, SMPP, legacy HTTP). */
export interface Services {
  config: TernConfig;
  store: Store;
  metrics: Metrics;
  tenancy: TenancyService;
  auth: AuthService;
  /** Organisations' opt-out lists. */
  blacklist: BlacklistService;
  lookup: LookupService;
  messaging: MessagingService;
  rcs: RcsService;
  router: Router;
  simulator: SimulatorCarrier;
  webhooks: WebhookOutbox;
  /** Reading webhook deliveries and replaying them. */
  webhookDeliveries: WebhookDeliveries;
  inbound: InboundService;
  /** Base of `href` fields outside a request (webhook bodies): TERN_PUBLIC_URL or the bound address. */
  publicBase: () => string;
  funds: FundsService;
  /** Idempotency-Key claims and answers. */
  idempotency: IdempotencyService;
  consumption: ConsumptionService;
  voice: VoiceService;
  legacy: LegacyService;
  /** The SMPP door: credentials, binds, submits, receipts. */
  smpp: SmppGateway;
}
