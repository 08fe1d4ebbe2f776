import type { Router } from '../carriers/router.ts';
import type { SimulatorCarrier } from '../carriers/simulator.ts';
import type { TernConfig } from '../config.ts';
import type { Metrics } from '../metrics.ts';
import type { Store } from '../store/db.ts';
import type { AuthService } from './auth.ts';
import type { ConsumptionService } from './consumption.ts';
import type { FundsService } from './funds.ts';
import type { RcsService } from './messaging/rcs.ts';
import type { MessagingService } from './messaging/service.ts';
import type { LookupService } from './lookup.ts';
import type { TenancyService } from './tenancy.ts';
import type { WebhookOutbox } from '../webhooks/outbox.ts';
import type { InboundService } from './messaging/inbound.ts';
import type { VoiceService } from './messaging/voice.ts';
import type { LegacyService } from './legacy.ts';
import type { SmppGateway } from './smpp-gateway.ts';

/** Every service, built once by the composition root and shared by all doors (REST, SMPP, legacy HTTP). */
export interface Services {
  config: TernConfig;
  store: Store;
  metrics: Metrics;
  tenancy: TenancyService;
  auth: AuthService;
  lookup: LookupService;
  messaging: MessagingService;
  rcs: RcsService;
  router: Router;
  simulator: SimulatorCarrier;
  webhooks: WebhookOutbox;
  inbound: InboundService;
  /** Base of `href` fields outside a request (webhook bodies): TERN_PUBLIC_URL or the bound address. */
  publicBase: () => string;
  funds: FundsService;
  consumption: ConsumptionService;
  voice: VoiceService;
  legacy: LegacyService;
  /** The SMPP door: credentials, binds, submits, receipts. */
  smpp: SmppGateway;
}
