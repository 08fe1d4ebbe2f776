import type { AccessControl } from './tenancy/access.ts';
import type { SsoService } from './tenancy/sso.ts';
import type { UserService } from './tenancy/users.ts';
import type { TenantAdmission } from './tenancy/admission.ts';
import type { Metrics } from '../metrics.ts';
import type { HttpLimits } from '../domain/http-limits.ts';
import type { ConsumptionService } from './billing/consumption.ts';
import type { FundsService } from './billing/funds.ts';
import type { IdempotencyService } from './idempotency.ts';
import type { LookupService } from './lookup/service.ts';
import type { LookupBatches } from './lookup/batch.ts';
import type { InboundService } from './messaging/inbound.ts';
import type { MessagingService } from './messaging/service.ts';
import type { Router } from './ports.ts';
import type { ClusterRateLimiter } from './rate-limit.ts';
import type { RcsService } from './rcs/service.ts';
import type { SmsService } from './sms/service.ts';
import type { TemplateService } from './sms/templates.ts';
import type { ShortLinkService } from './links/service.ts';
import type { ConnectorAdmin } from './routing/admin.ts';
import type { DeliveryQuality } from './routing/quality.ts';
import type { ConnectorService } from './routing/service.ts';
import type { AuthService } from './tenancy/auth.ts';
import type { BlacklistService } from './tenancy/blacklist.ts';
import type { PrivacyService } from './privacy/service.ts';
import type { AuditService } from './audit/service.ts';
import type { CampaignService } from './campaigns/service.ts';
import type { TenancyService } from './tenancy/service.ts';
import type { SmppCredentialService } from './tenancy/smpp-credentials.ts';
import type { VoiceService } from './voice/service.ts';
import type { ContactService } from './contacts/service.ts';
import type { Sends } from './sms/sends.ts';
import type { SubAccountService } from './tenancy/sub-accounts.ts';
import type { FraudGuards } from './fraud/guards.ts';
import type { OtpService } from './otp/service.ts';
import type { WebhookDeliveries } from './webhooks/deliveries.ts';
import type { WebhookOutbox } from './webhooks/outbox.ts';
import type { MessageFeed } from './feed/message-feed.ts';
import type { QuoteService } from './quotes/service.ts';
import type { SmppSessionDirectory } from './smpp/sessions.ts';

/** The use cases, built once by the composition root and shared by every door (REST, legacy HTTP, SMPP). */
export interface Services {
  /** What the HTTP doors read of the settings: TERN_PUBLIC_URL, TERN_HTTP_PORT, TERN_TRUST_PROXY and the connection bounds. */
  http: {
    publicUrl: string | null;
    port: number;
    trustProxy: boolean;
    /** TERN_HTTP_KEEP_ALIVE_SECONDS, TERN_HTTP_HEADERS_TIMEOUT_SECONDS, TERN_HTTP_REQUEST_TIMEOUT_SECONDS, TERN_HTTP_MAX_CONNECTIONS. */
    limits: HttpLimits;
  };
  metrics: Metrics;
  /** Base of `href` fields outside a request (webhook bodies): TERN_PUBLIC_URL or the bound address. */
  publicBase: () => string;
  /** The database, for readiness checks. */
  database: {
    readonly dialect: 'sqlite' | 'postgres';
    /** Its schema's migrations as this node found (and left) them at start. */
    readonly schema: { readonly applied: number; readonly latest: string | null; readonly pending: number };
    ping(): Promise<void>;
    /** Whether the database answers now (and can be written), within a short timeout. */
    ready(): Promise<{ ready: true } | { ready: false; reason: string }>;
  };
  tenancy: TenancyService;
  auth: AuthService;
  /** Who may come in, and how fast: authentication with lockouts, and traffic limits. */
  access: AccessControl;
  users: UserService;
  sso: SsoService;
  /** Turns between organisations for the requests this node answers. */
  admission: TenantAdmission;
  smppCredentials: SmppCredentialService;
  /** Sub-accounts with a login and password (the legacy interface's). */
  subAccounts: SubAccountService;
  /** Organisations' address books: contacts in named groups. */
  contacts: ContactService;
  /** Sends as a whole: recent ones, and batches of personalised messages. */
  sends: Sends;
  /** Organisations' opt-out lists. */
  blacklist: BlacklistService;
  /** Content retention, erasure requests and exports of one number's data. */
  privacy: PrivacyService;
  /** Who changed what through the management interfaces. */
  audit: AuditService;
  lookup: LookupService;
  /** Batch lookups answered by webhook. */
  lookupBatches: LookupBatches;
  messaging: MessagingService;
  sms: SmsService;
  /** Channels' named message templates with variables. */
  templates: TemplateService;
  shortLinks: ShortLinkService;
  rcs: RcsService;
  voice: VoiceService;
  inbound: InboundService;
  /** Campaigns of every message type that has them (SMS, RCS). */
  campaigns: CampaignService;
  webhooks: WebhookOutbox;
  /** Reading webhook deliveries and replaying them. */
  webhookDeliveries: WebhookDeliveries;
  funds: FundsService;
  /** Idempotency-Key claims and answers. */
  idempotency: IdempotencyService;
  consumption: ConsumptionService;
  /** Operator connections and routes as data; events injected on a connector's behalf. */
  connectors: ConnectorService;
  /** Creating, changing and removing connectors and routes (admin API, configuration file). */
  connectorAdmin: ConnectorAdmin;
  /** Delivery rate and time to DELIVERED per connector and destination network. */
  deliveryQuality: DeliveryQuality;
  /** The running connectors, by route. */
  router: Router;
  /** Limits that hold across the nodes of a cluster. */
  rateLimiter: ClusterRateLimiter;
  /** One-time passwords: the verify API. */
  otp: OtpService;
  /** Destination countries and velocity limits that stop messages at accept. */
  fraudGuards: FraudGuards;
  /** Message events as they are committed, for clients that follow them live. */
  feed: MessageFeed;
  /** What a send would cost, before it is made. */
  quotes: QuoteService;
  /** The SMPP sessions bound to this node. */
  smppSessions: SmppSessionDirectory;
}
