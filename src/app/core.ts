import type { Logger } from 'pino';
import type { TernConfig } from '../config/index.ts';
import { KINDS } from '../connectors/registry.ts';
import type { ConnectorRouter } from '../connectors/router.ts';
import { ConsumptionService } from '../core/billing/consumption.ts';
import { FundsService } from '../core/billing/funds.ts';
import { CampaignService } from '../core/campaigns/service.ts';
import { Cluster } from '../core/cluster.ts';
import { ContactService } from '../core/contacts/service.ts';
import { EventConsumers } from '../core/events.ts';
import { MessageFeed } from '../core/feed/message-feed.ts';
import { FraudGuards } from '../core/fraud/guards.ts';
import { IdempotencyService } from '../core/idempotency.ts';
import { LookupService } from '../core/lookup/service.ts';
import { LookupBatches } from '../core/lookup/batch.ts';
import { CarrierEvents } from '../core/messaging/carrier-events.ts';
import { InboundService } from '../core/messaging/inbound.ts';
import { MessagingService } from '../core/messaging/service.ts';
import { ShortLinkService } from '../core/links/service.ts';
import { OtpCodes } from '../core/otp/codes.ts';
import { OtpService } from '../core/otp/service.ts';
import { QuoteService } from '../core/quotes/service.ts';
import { ClusterRateLimiter } from '../core/rate-limit.ts';
import { SlidingSecondLimiter } from '../core/sliding-rate.ts';
import { rcsCampaignSender } from '../core/rcs/campaigns.ts';
import { RcsService } from '../core/rcs/service.ts';
import { DeliveryQuality } from '../core/routing/quality.ts';
import { ConnectorAdmin } from '../core/routing/admin.ts';
import { ConnectorService } from '../core/routing/service.ts';
import { SsoService } from '../core/tenancy/sso.ts';
import { UserService } from '../core/tenancy/users.ts';
import { SecretBox } from '../core/secrets.ts';
import { SmppBinds } from '../core/smpp/binds.ts';
import { SmppConcatParts } from '../core/smpp/concat-parts.ts';
import { SmppOutbox } from '../core/smpp/outbox.ts';
import { smsCampaignSender } from '../core/sms/campaigns.ts';
import { TemplateService } from '../core/sms/templates.ts';
import { Sends } from '../core/sms/sends.ts';
import { SmsService } from '../core/sms/service.ts';
import { AccessControl } from '../core/tenancy/access.ts';
import { TenantAdmission } from '../core/tenancy/admission.ts';
import { AuthService } from '../core/tenancy/auth.ts';
import { BlacklistService } from '../core/tenancy/blacklist.ts';
import { PrivacyService } from '../core/privacy/service.ts';
import { AuditService } from '../core/audit/service.ts';
import { type AdminKeyResult, ensureAdminKey } from '../core/tenancy/bootstrap.ts';
import { TenancyService } from '../core/tenancy/service.ts';
import { SmppCredentialService } from '../core/tenancy/smpp-credentials.ts';
import { SubAccountService } from '../core/tenancy/sub-accounts.ts';
import { VoiceService } from '../core/voice/service.ts';
import { WebhookDeliveries } from '../core/webhooks/deliveries.ts';
import { WebhookOutbox } from '../core/webhooks/outbox.ts';
import { VOICE_CALL_ATTEMPTS } from '../domain/delivery.ts';
import { parseSchedule } from '../domain/retry.ts';
import { Metrics } from '../metrics.ts';
import { resolveSecretKey } from '../secret-key.ts';
import { createTextToSpeech } from '../speech/engine.ts';
import type { Store } from '../store/db.ts';
import type { StartStep } from './lifecycle.ts';

/** The core's use cases that need no running connector, and what they share. */
export type Core = Awaited<ReturnType<typeof buildCore>>;

/** The use cases that reach the operators beyond sending (RCS capability, live number status), and campaigns. */
export type NetworkUseCases = ReturnType<typeof buildNetworkUseCases>;

/**
 * The core: tenancy and keys, the messaging pipeline and each message type's use cases, billing, operator
 * connections as data, webhooks, SMPP state, one-time passwords, fraud guards and the metrics they report to.
 * `publicBase` is the base of `href` fields outside a request.
 */
export async function buildCore(config: TernConfig, store: Store, logger: Logger, publicBase: () => string, unlessDiskFull: StartStep) {
  const adminKey: AdminKeyResult = await ensureAdminKey(store, config.adminKey);
  const secretKey = resolveSecretKey(config.secretKey, config.databaseUrl);
  const box = new SecretBox(secretKey.key);
  if (secretKey.source === 'file') logger.info({ path: secretKey.path }, 'secrets are sealed with the key in this file (set TERN_SECRET_KEY to use another)');
  if (secretKey.source === 'none') logger.warn('TERN_SECRET_KEY is not set: webhook signing secrets and operator secrets cannot be stored');
  const tenancy = new TenancyService(store, box, { shortLinksConfigured: config.shortLinkBase !== null });
  const sealed = await unlessDiskFull('sealing secrets stored in clear', () => tenancy.sealSecretsInClear(), 0);
  if (sealed > 0) logger.info({ channels: sealed }, 'webhook signing secrets stored in clear were sealed');
  const auth = new AuthService(store, tenancy, adminKey.hash);
  const smppCredentials = new SmppCredentialService(store, tenancy);
  const users = new UserService(store, tenancy);
  const sso = new SsoService(store, users, box);
  // Counts of messages (metrics) are taken once their transaction committed.
  const consumers = new EventConsumers((tx, run) => store.signals.afterCommit(tx, run, () => undefined));
  const validity = {
    messageValiditySeconds: config.messageValiditySeconds,
    ...(config.shortLinkBase && { shortLinks: { base: config.shortLinkBase, ttlMs: config.shortLinkDays * 86_400_000 } }),
  };
  const messaging = new MessagingService(store, tenancy, validity, consumers);
  await unlessDiskFull('the price list', () => messaging.init(), undefined);
  const inbound = new InboundService(store, tenancy, messaging);
  const rateLimiter = new ClusterRateLimiter(store);
  const cluster = new Cluster(store, config.nodeId, { leaseMs: config.dispatchLeaseMs });

  // Operator connections as data; what connectors report comes back through the carrier events.
  const carrierEvents = new CarrierEvents(store, messaging, async (events) => void (await inbound.receive(events)), {
    callAttempts: VOICE_CALL_ATTEMPTS,
    callRetryMs: config.voiceRetryMs,
  });
  // Rates that must hold in every sliding second across the cluster: operator connections' and SMPP customers' tps.
  const pace = new SlidingSecondLimiter(store);
  const connectors = new ConnectorService(store, carrierEvents.sink, { box, pace, cluster, publicBase });
  const connectorAdmin = new ConnectorAdmin(store, KINDS, box, connectors);
  const deliveryQuality = new DeliveryQuality(store);

  const voice = new VoiceService(store, messaging, createTextToSpeech(config.tts), logger.child({ component: 'voice' }));
  const webhooks = new WebhookOutbox(store, messaging, publicBase, parseSchedule(config.webhookRetrySchedule));
  const smppOutbox = new SmppOutbox(store);
  const metrics = new Metrics();
  metrics.watchStatements(() => store.statements.count);
  metrics.watchDatabase(() => store.ping());
  consumers.countWith(metrics);
  metrics.watchSmppOutbox(() => smppOutbox.pending());
  metrics.watchDeliveryQuality(async () => {
    await deliveryQuality.refresh();
    return deliveryQuality.current();
  });
  const access = new AccessControl(store, auth, rateLimiter, {
    pace,
    defaults: config.trafficLimits,
    failuresPerMinute: config.authFailuresPerMinute,
    onFailure: (door) => metrics.authFailures.inc({ door }),
    onLockout: (door) => metrics.authLockouts.inc({ door }),
    onLimited: (group) => metrics.rateLimited.inc({ group }),
  });

  // Fraud guards look at every message before it is stored; a one-time password's text is put back for connectors only.
  const fraudGuards = new FraudGuards(store, tenancy, rateLimiter, {
    ...config.fraud,
    onBlocked: (guard) => metrics.fraudBlocked.inc({ guard }),
    onAlert: (guard) => metrics.fraudAlerts.inc({ guard }),
  });
  messaging.screenWith(fraudGuards.screen);
  const otp = new OtpService(store, tenancy, messaging, voice, new OtpCodes(secretKey.key), publicBase, config.otp, logger.child({ component: 'otp' }), {
    sent: (channel) => metrics.otpSent.inc({ channel }),
    settled: (status) => metrics.otpSettled.inc({ status }),
    checked: (result) => metrics.otpChecks.inc({ result }),
  });
  metrics.watchOtp(() => otp.conversion());

  // An idempotency key is held by the process serving its request, for as long as that process lives.
  const idempotency = new IdempotencyService(store, cluster);
  const funds = new FundsService(store, idempotency);
  return {
    store,
    adminKey,
    box,
    metrics,
    tenancy,
    auth,
    access,
    users,
    sso,
    admission: new TenantAdmission(config.organisationConcurrency, undefined, () => metrics.turnsWaited.inc()),
    smppCredentials,
    subAccounts: new SubAccountService(store, tenancy, smppCredentials, funds, box),
    contacts: new ContactService(store),
    sends: new Sends(store, messaging),
    blacklist: new BlacklistService(store),
    audit: new AuditService(store, { retentionDays: config.retention.auditDays }),
    privacy: new PrivacyService(store, tenancy, { contentDays: config.retention.contentDays, secret: secretKey.key ?? '' }),
    consumers,
    messaging,
    sms: new SmsService(messaging),
    templates: new TemplateService(store),
    shortLinks: new ShortLinkService(store, messaging),
    voice,
    inbound,
    carrierEvents,
    webhooks,
    webhookDeliveries: new WebhookDeliveries(store),
    funds,
    idempotency,
    consumption: new ConsumptionService(store),
    connectors,
    connectorAdmin,
    deliveryQuality,
    rateLimiter,
    cluster,
    otp,
    fraudGuards,
    feed: new MessageFeed(store),
    quotes: new QuoteService(tenancy, messaging),
    smppOutbox,
    smppBinds: new SmppBinds(store, config.nodeId),
    smppConcatParts: new SmppConcatParts(store, config.nodeId),
  };
}

/** Made once the connectors run: what asks the operator network, and campaigns with each type's sender. */
export function buildNetworkUseCases(config: TernConfig, core: Core, router: ConnectorRouter, logger: Logger) {
  const { store, messaging } = core;
  const lookup = new LookupService(
    store,
    { liveStatus: (n) => router.liveStatus(n) },
    { cacheDays: config.lookupCacheDays, countryOf: async (id) => (await core.tenancy.locale(id)).defaultCountry },
  );
  const lookupBatches = new LookupBatches(store, lookup, (id) => core.tenancy.getChannel(id), logger.child({ component: 'lookup' }));
  const rcs = new RcsService(
    store,
    messaging,
    {
      capability: (msisdn) => router.rcsCapability(msisdn),
      bodyProblem: (msisdn, body) => router.rcsBodyProblem(msisdn, body),
      revoke: (messages) => router.revoke(messages),
    },
    { messageValiditySeconds: config.messageValiditySeconds },
    logger.child({ component: 'rcs' }),
  );
  // Campaigns know no message type: each type that has them brings how it sends one.
  const campaigns = new CampaignService(store, messaging);
  campaigns.register('SMS', smsCampaignSender(messaging, core.templates));
  campaigns.register('RCS', rcsCampaignSender(rcs, messaging));
  return { lookup, lookupBatches, rcs, campaigns };
}
