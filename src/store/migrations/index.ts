import type { Migration } from 'kysely/migration';
import * as tenancy from './001-tenancy.ts';
import * as messaging from './002-messaging.ts';
import * as transfers from './003-transfers.ts';
import * as webhooks from './004-webhooks.ts';
import * as rcs from './005-rcs.ts';
import * as voice from './006-voice.ts';
import * as smpp from './007-smpp.ts';
import * as connectors from './008-connectors.ts';
import * as rateWindows from './009-rate-windows.ts';
import * as operators from './012-operators.ts';
import * as smppConnectors from './015-smpp-connectors.ts';
import * as trafficLimits from './016-traffic-limits.ts';
import * as legacyContacts from './017-legacy-contacts.ts';
import * as campaignTree from './018-campaign-tree.ts';
import * as organisationLocale from './019-organisation-locale.ts';
import * as otp from './020-otp.ts';
import * as webhookOrigin from './023-webhook-origin.ts';
import * as dispatchLanes from './024-dispatch-lanes.ts';
import * as smppBinds from './025-smpp-binds.ts';
import * as smppConcatParts from './026-smpp-concat-parts.ts';
import * as rcsConversationLatest from './027-rcs-conversation-latest.ts';
import * as rollupShards from './028-rollup-shards.ts';
import * as connectorRecordLanes from './029-connector-record-lanes.ts';
import * as scheduledMessages from './030-scheduled-messages.ts';
import * as consumptionEpochs from './031-consumption-epochs.ts';
import * as webhookPendingMessage from './032-webhook-pending-message.ts';
import * as smppCredentialWindow from './033-smpp-credential-window.ts';
import * as webhookPendingOrigin from './034-webhook-pending-origin.ts';
import * as dispatchWaiting from './035-dispatch-waiting.ts';
import * as idempotencyClaimant from './036-idempotency-claimant.ts';
import * as numberLookups from './037-number-lookups.ts';
import * as lookupBatches from './038-lookup-batches.ts';
import * as sendingWindows from './039-sending-windows.ts';
import * as senderRegistry from './040-sender-registry.ts';
import * as messageTemplates from './041-message-templates.ts';
import * as shortLinks from './042-short-links.ts';
import * as connectorRates from './044-connector-rates.ts';
import * as deliveryQuality from './045-delivery-quality.ts';
import * as privacyControls from './046-privacy-controls.ts';
import * as auditLog from './047-audit-log.ts';
import * as users from './049-users.ts';
import * as singleSignOn from './050-single-sign-on.ts';
import * as marginUnknownCosts from './051-margin-unknown-costs.ts';

/** Applied in key order; never rename or edit a migration that has shipped, add a new one. */
export const migrations: Record<string, Migration> = {
  '001-tenancy': tenancy,
  '002-messaging': messaging,
  '003-transfers': transfers,
  '004-webhooks': webhooks,
  '005-rcs': rcs,
  '006-voice': voice,
  '007-smpp': smpp,
  '008-connectors': connectors,
  '009-rate-windows': rateWindows,
  '012-operators': operators,
  '015-smpp-connectors': smppConnectors,
  '016-traffic-limits': trafficLimits,
  '017-legacy-contacts': legacyContacts,
  '018-campaign-tree': campaignTree,
  '019-organisation-locale': organisationLocale,
  '020-otp': otp,
  '023-webhook-origin': webhookOrigin,
  '024-dispatch-lanes': dispatchLanes,
  '025-smpp-binds': smppBinds,
  '026-smpp-concat-parts': smppConcatParts,
  '027-rcs-conversation-latest': rcsConversationLatest,
  '028-rollup-shards': rollupShards,
  '029-connector-record-lanes': connectorRecordLanes,
  '030-scheduled-messages': scheduledMessages,
  '031-consumption-epochs': consumptionEpochs,
  '032-webhook-pending-message': webhookPendingMessage,
  '033-smpp-credential-window': smppCredentialWindow,
  '034-webhook-pending-origin': webhookPendingOrigin,
  '035-dispatch-waiting': dispatchWaiting,
  '036-idempotency-claimant': idempotencyClaimant,
  '037-number-lookups': numberLookups,
  '038-lookup-batches': lookupBatches,
  '039-sending-windows': sendingWindows,
  '040-sender-registry': senderRegistry,
  '041-message-templates': messageTemplates,
  '042-short-links': shortLinks,
  '044-connector-rates': connectorRates,
  '045-delivery-quality': deliveryQuality,
  '046-privacy-controls': privacyControls,
  '047-audit-log': auditLog,
  '049-users': users,
  '050-single-sign-on': singleSignOn,
  '051-margin-unknown-costs': marginUnknownCosts,
};

/**
 * Migrations that break what an earlier version of Tern reads or writes (a table or column dropped or renamed, a
 * column's type changed, a constraint tightened), each with the major version that brought it (`2.0.0`). Applying one
 * records that version as the oldest one the schema still serves (setting `schema.compatibleFrom`), and a node of an
 * earlier version refuses to start on it instead of failing at its first query. Within a major version migrations only
 * add, so this stays empty until the next major one (test/store/migration-policy.test.ts checks both).
 */
export const breakingMigrations: Record<string, string> = {};
