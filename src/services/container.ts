import type { TernConfig } from '../config.ts';
import type { Metrics } from '../metrics.ts';
import type { Store } from '../store/db.ts';
import type { AuthService } from './auth.ts';
import type { TenancyService } from './tenancy.ts';

/** Every service, built once by the composition root and shared by all doors (REST, SMPP, legacy HTTP). */
export interface Services {
  config: TernConfig;
  store: Store;
  metrics: Metrics;
  tenancy: TenancyService;
  auth: AuthService;
}
