import type { Router } from '../carriers/router.ts';
import type { SimulatorCarrier } from '../carriers/simulator.ts';
import type { TernConfig } from '../config.ts';
import type { Metrics } from '../metrics.ts';
import type { Store } from '../store/db.ts';
import type { AuthService } from './auth.ts';
import type { MessagingService } from './messaging/service.ts';
import type { LookupService } from './lookup.ts';
import type { TenancyService } from './tenancy.ts';

/** Every service, built once by the composition root and shared by all doors (REST, SMPP, legacy HTTP). */
export interface Services {
  config: TernConfig;
  store: Store;
  metrics: Metrics;
  tenancy: TenancyService;
  auth: AuthService;
  lookup: LookupService;
  messaging: MessagingService;
  router: Router;
  simulator: SimulatorCarrier;
}
