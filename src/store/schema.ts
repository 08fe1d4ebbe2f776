import type { Generated, Kysely } from 'kysely';

/**
 * Row types of Tern's tables. Timestamps are epoch milliseconds, money is integer micro-euros, booleans are 0/1
 * and lists are JSON text, so SQLite and PostgreSQL store and return exactly the same values.
 */

export interface OrganisationTable {
  id: string;
  name: string;
  parent_id: string | null;
  balance: number;
  currency: string;
  state: string;
  parent_billing: number;
  monthly_limit: number | null;
  created_at: number;
  /** ISO 3166 alpha-2 country whose national numbers the organisation may send to; null: international only. */
  default_country: string | null;
  /** IANA time zone in which dates written without an offset are read. */
  time_zone: string;
  /** Where STOP replies go and the mention appended to marketing; null: the platform's. */
  opt_out_short_code: string | null;
  opt_out_text: string | null;
  /** Days its message texts are kept before they are erased; null: the platform's TERN_CONTENT_RETENTION_DAYS. */
  content_retention_days: number | null;
}

export interface SenderTable {
  id: string;
  organisation_id: string;
  value: string;
  kind: string;
  /** JSON list of ISO 3166 alpha-2 codes; empty: every country. */
  countries: string;
  status: string;
  created_at: number;
  updated_at: number;
}

export interface ChannelTable {
  id: string;
  organisation_id: string;
  name: string;
  type: string;
  flow: string;
  default_from_field: string | null;
  from_field_list: string;
  default_callback_url_status: string | null;
  default_callback_url_mo: string | null;
  daily_limit: number | null;
  monthly_limit: number | null;
  webhook_secret: string;
  webhook_secret_previous: string | null;
  webhook_secret_previous_until: number | null;
  fallback_sms_channel_id: string | null;
  /** 1: long URLs in its SMS are replaced by short links at accept. */
  short_links: number;
  state: string;
  created_at: number;
}

export interface CredentialTable {
  id: string;
  channel_id: string;
  organisation_id: string;
  name: string;
  key_hash: string;
  key_prefix: string;
  roles: string;
  state: string;
  created_at: number;
  revoked_at: number | null;
}

export interface LedgerTable {
  id: string;
  organisation_id: string;
  amount: number;
  balance_after: number;
  kind: string;
  reference: string | null;
  description: string | null;
  message_id: string | null;
  transfer_id: string | null;
  created_at: number;
}

export interface SettingTable {
  key: string;
  value: string;
}

export interface PriceTable {
  channel_type: string;
  country: string;
  kind: string;
  amount: number;
  updated_at: number;
}

export interface IdempotencyTable {
  scope: string;
  key: string;
  request_hash: string;
  status_code: number;
  response_body: string;
  created_at: number;
  /** The process serving the request while it is in progress (`node id@start time`); null before migration 036. */
  claimed_by: string | null;
}

export interface MessageTable {
  id: string;
  organisation_id: string;
  payer_id: string;
  channel_id: string;
  campaign_id: string | null;
  type: string;
  direction: string;
  recipient: string;
  sender: string | null;
  body: string;
  encoding: string | null;
  part_count: number;
  length: number;
  price: number;
  price_kind: string | null;
  charged: number;
  status: string;
  status_detail: string | null;
  status_at: number;
  ref_client: string | null;
  callback_url_status: string | null;
  callback_url_mo: string | null;
  accepted_at: number;
  send_at: number;
  validity_until: number | null;
  origin_message_id: string | null;
  country: string | null;
  mcc_mnc: string | null;
  network: string | null;
  upstream_id: string | null;
  connector: string | null;
  source: string;
  smpp_credential_id: string | null;
  registered_delivery: number;
  day: string;
  extra: string | null;
  /** Times the message was placed with an operator (a voice call tried again after a busy line is placed twice). */
  attempts: number;
  /** The route it was placed through. */
  route: string | null;
  /** What its last placement cost (micro-euros), from the connector's rate in force then; null: not known. */
  cost: number | null;
  /** When its content (text, template values, rich content, links) was erased; null while it is kept. */
  content_erased_at: number | null;
}

/** How far the content retention has gone through a channel's messages of one direction. */
export interface ContentRetentionCursorTable {
  channel_id: string;
  direction: string;
  /** Every message accepted before it is erased (or was waiting to be sent when the retention passed it). */
  through_at: number;
}

export interface DispatchQueueTable {
  message_id: string;
  due_at: number;
  attempts: number;
  claimed_by: string | null;
  lease_until: number | null;
  /** The connector the message waits for (its last temporary error came from it, or none was up). */
  waiting_on: string | null;
  /** Who held the row before the current claim, when a claim ran out without being released (a takeover). */
  previous_claimant: string | null;
  /** 0: OTP and TRANSACTIONAL messages, claimed first; 1: MARKETING. */
  lane: number;
  /** When it comes up in its lane (ms, fair between organisations; at least its due time). */
  rank: number;
  /**
   * 1 while the row waits for its due time (scheduled, backed off), apart from the ready rows the claims read; a claim
   * that finds it due makes it 0 (ready). A row is claimed only once ready and due.
   */
  waiting: number;
}

export interface MessageEventTable {
  id: string;
  message_id: string;
  organisation_id: string;
  channel_id: string;
  kind: string;
  status: string;
  detail: string | null;
  at: number;
}

export interface ConsumptionRollupTable {
  organisation_id: string;
  channel_id: string;
  channel_type: string;
  day: string;
  status: string;
  mcc_mnc: string;
  price_kind: string;
  /** One of the rows of the same key that writers spread over (see rollups.ts); readers add them up. */
  shard: Generated<number>;
  quantity: number;
  messages: number;
  amount: number;
}

export interface ConsumptionEpochTable {
  organisation_id: string;
  /** Raised by each transaction that changes a settled day's consumption (see rollups.ts). */
  epoch: number;
}

export interface BlacklistTable {
  organisation_id: string;
  msisdn: string;
  source: string;
  created_at: number;
}

export interface CampaignTable {
  id: string;
  organisation_id: string;
  channel_id: string;
  ref_client: string | null;
  send_at: number;
  created_at: number;
  recipients: number;
  body: string;
  /** When the campaign was cancelled as a whole (its scheduled messages with it); null while it is not. */
  cancelled_at: number | null;
}

export interface TransferTable {
  id: string;
  source_id: string;
  destination_id: string;
  amount: number;
  currency: string;
  reference: string | null;
  description: string | null;
  credential_id: string | null;
  created_at: number;
}

export interface WebhookDeliveryTable {
  id: string;
  event_id: string;
  message_id: string;
  organisation_id: string;
  channel_id: string;
  kind: string;
  method: string;
  url: string;
  /** The url's origin (null on deliveries written before it was recorded). */
  origin: string | null;
  payload: string;
  state: string;
  attempts: number;
  next_attempt_at: number;
  lease_until: number | null;
  last_http_status: number | null;
  last_error: string | null;
  created_at: number;
  updated_at: number;
  delivered_at: number | null;
}

export interface WebhookAttemptTable {
  id: string;
  delivery_id: string;
  at: number;
  outcome: string;
  http_status: number | null;
  latency_ms: number;
  error: string | null;
}

export interface UnroutedInboundTable {
  id: string;
  connector: string;
  type: string;
  sender: string;
  recipient: string;
  body: string;
  received_at: number;
}

export interface RcsConversationTable {
  id: string;
  organisation_id: string;
  channel_id: string;
  /** The user's number. */
  msisdn: string;
  agent: string | null;
  opened_at: number;
  expires_at: number;
  /** The MO message that opened it. */
  opened_by: string | null;
  /**
   * 1 on the user's latest conversation with the channel, 0 on those it followed; unique per channel and user, so
   * nodes opening one at once agree on one.
   */
  latest: number;
}

export interface RcsConversationMessageTable {
  conversation_id: string;
  message_id: string;
  at: number;
}

export interface VoiceAudioTable {
  message_id: string;
  wav: Buffer;
  duration_ms: number;
  created_at: number;
}

export interface SmppBindTable {
  credential_id: string;
  /** The session holding the bind (unique per connection). */
  session: string;
  node: string;
  bound_at: number;
}

/** A part of a concatenated SMPP submit waiting for the rest of its message (one row per part). */
export interface SmppConcatPartTable {
  credential_id: string;
  source: string;
  destination: string;
  /** Concatenation reference (UDH or sar_msg_ref_num). */
  ref: number;
  total: number;
  /** 1-based. */
  seq: number;
  /** The id every part of the message is answered with. */
  message_id: string;
  /** User data without the UDH. */
  payload: Buffer;
  data_coding: number;
  /** What the SMPP server needs back with the whole message or its expiry (opaque JSON). */
  meta: string;
  created_at: number;
  /** The assembly's: set by its first part, the same on all its parts. */
  expires_at: number;
  /** When the message was made whole and taken for storing (its parts stay until it is stored); null while waiting. */
  taken_at: number | null;
  /** The node that took it. */
  taken_by: string | null;
}

export interface SmppCredentialTable {
  id: string;
  channel_id: string;
  organisation_id: string;
  system_id: string;
  /** scrypt$N$r$p$salt$hash (base64). */
  password_hash: string;
  /** JSON list of addresses and CIDR ranges; empty: any. */
  allowed_ips: string;
  max_binds: number;
  /** Submits a second; 0: no limit. */
  tps: number;
  /** deliver_sm a session sends before waiting for their responses; 0: the node's TERN_SMPP_WINDOW. */
  deliver_window: number;
  state: string;
  created_at: number;
}

export interface SmppOutboxTable {
  id: string;
  credential_id: string;
  /** RECEIPT or MO. */
  kind: string;
  message_id: string | null;
  /** JSON list of deliver_sm fields, short_message in hex; sent in order over one session. */
  pdus: string;
  created_at: number;
  expires_at: number;
  attempts: number;
  next_attempt_at: number;
  lease_until: number | null;
}

/** One operator connection (its kind's settings as JSON). */
export interface ConnectorTable {
  id: string;
  /** Unique and never changed: messages and receipts name their connector by it. */
  name: string;
  kind: string;
  settings: string;
  /** JSON object of secret settings, each sealed (SecretBox). */
  secrets: string | null;
  /** DEFAULT (the embedded simulator), API or CONFIG. */
  source: string;
  enabled: number;
  created_at: number;
  updated_at: number;
}

/** A routing rule: which messages (`match`, JSON) go to which connectors (JSON `[{connectorId, weight}]`). */
export interface RouteTable {
  id: string;
  name: string;
  priority: number;
  match: string;
  connectors: string;
  /** JSON list of connector ids tried in order when the route's connectors cannot take a message. */
  failover: string;
  /** What one part costs the operator of this route, in micro-euros. */
  cost_per_part: number | null;
  /** 1: a live lookup before each send through the route. */
  lookup_before_send: number;
  /** How the route chooses among its connectors: weight, cost or quality. */
  strategy: string;
  /** 1: the route may place a message whose cost is above what was charged for it. */
  allow_loss: number;
  /** Connectors a message is placed with at most, counting re-routes after a failed delivery. */
  max_attempts: number;
  /** Basis points: connectors whose delivery rate is below are left out; null: none. */
  min_delivery_rate: number | null;
  source: string;
  enabled: number;
  created_at: number;
  updated_at: number;
}

/** State a connector keeps about its work (pending receipts, timers), with an optional due time and a lease. */
export interface ConnectorRecordTable {
  connector: string;
  key: string;
  data: string;
  due_at: number | null;
  lease_until: number | null;
  created_at: number;
  /** The lane of the message the record is about (0: OTP and TRANSACTIONAL, 1: MARKETING): due records go lane by lane. */
  lane: number;
}

/** The share of one rate limit's window that the nodes together have taken. */
export interface RateWindowTable {
  key: string;
  window_start: number;
  used: number;
}

/** Per day, route and connector: what was placed, what it cost, what was charged for it. */
export interface RouteRollupTable {
  day: string;
  route: string;
  connector: string;
  /** As in consumption rollups. */
  shard: Generated<number>;
  messages: number;
  parts: number;
  cost: number;
  charged: number;
}

/** One rate of a connector's table: micro-euros per part for what it matches ('' matches all), while in force. */
export interface ConnectorRateTable {
  id: string;
  connector_id: string;
  type: string;
  prefix: string;
  country: string;
  mcc_mnc: string;
  amount: number;
  valid_from: number;
  valid_to: number | null;
  created_at: number;
}

/** Per day, organisation, connector and destination country: what was placed, charged for it and what it cost. */
export interface MarginRollupTable {
  day: string;
  organisation_id: string;
  connector: string;
  country: string;
  shard: Generated<number>;
  messages: number;
  parts: number;
  charged: number;
  /** What the messages whose cost is known cost (a message is, when every placement of it has a known cost). */
  cost: number;
  /** Messages counted here whose cost is not known, and what was charged for them: left out of the margin. */
  unknown_cost_messages: Generated<number>;
  unknown_cost_charged: Generated<number>;
}

/** One placement of a message with an operator, and how its delivery ended (outcome null: no final receipt yet). */
export interface MessageAttemptTable {
  message_id: string;
  attempt: number;
  connector: string;
  route: string;
  upstream_id: string;
  network: string;
  cost: number | null;
  placed_at: number;
  outcome: string | null;
  detail: string | null;
  ended_at: number | null;
}

/** Final receipts per connector, destination network and hour: delivered, failed, and time to DELIVERED summed. */
export interface DeliveryQualityTable {
  connector: string;
  network: string;
  bucket: number;
  shard: Generated<number>;
  delivered: number;
  failed: number;
  delivered_ms: number;
}

/** A running node of the cluster, as it last said it was alive. */
export interface NodeTable {
  id: string;
  started_at: number;
  seen_at: number;
}

/** One of a connector's binds (connections), held by one node at a time under a lease. */
export interface ConnectorSlotTable {
  connector: string;
  slot: number;
  node: string | null;
  lease_until: number | null;
}

/** A receipt whose message was not found yet (its submit's outcome not recorded), tried again a while. */
export interface AuthLockoutTable {
  address: string;
  strikes: number;
  locked_until: number;
  updated_at: number;
}

export interface OrganisationTrafficLimitTable {
  organisation_id: string;
  route_group: string;
  per_key: number;
  per_organisation: number;
}

export interface UnmatchedReceiptTable {
  id: string;
  connector: string;
  upstream_id: string;
  event: string;
  attempts: number;
  next_attempt_at: number;
  lease_until: number | null;
  expires_at: number;
}

/** An organisation's address book entry (a number, with names). */
export interface ContactTable {
  id: string;
  organisation_id: string;
  msisdn: string;
  last_name: string;
  first_name: string | null;
  company: string | null;
  other: string | null;
  /** YYYY-MM-DD. */
  birth_date: string | null;
  created_at: number;
  updated_at: number;
}

/** A named group of an organisation's contacts. */
export interface ContactGroupTable {
  id: string;
  organisation_id: string;
  name: string;
  created_at: number;
}

export interface ContactGroupMemberTable {
  group_id: string;
  contact_id: string;
}

/** A sub-account's login: authenticates as its ADMIN credential. */
export interface AccountLoginTable {
  organisation_id: string;
  login: string;
  /** `login` in lower case, unique. */
  login_key: string;
  /** scrypt$N$r$p$salt$hash (base64). */
  password_hash: string;
  credential_id: string;
  reference: string | null;
  /** JSON of the contact details given at creation. */
  contact: string | null;
  created_at: number;
}

/** A one-time password: its code is never stored, only an HMAC of it and the salt it is derived from (with the server key). */
export interface OtpTable {
  id: string;
  organisation_id: string;
  /** The SMS channel of the key that asked for it: who may read and check it, and where its webhooks go. */
  channel_id: string;
  recipient: string;
  /** PENDING, APPROVED, EXPIRED or CANCELLED. */
  status: string;
  detail: string | null;
  code_length: number;
  alphabet: string;
  code_salt: string;
  code_hash: string;
  max_attempts: number;
  attempts: number;
  /** The template and language of its latest send (a voice fallback says the same). */
  template: string;
  locale: string;
  ref_client: string | null;
  last_message_id: string;
  last_channel: string;
  last_sent_at: number;
  sends: number;
  /** When a call is placed if its text message is not delivered by then. */
  fallback_at: number | null;
  created_at: number;
  expires_at: number;
  settled_at: number | null;
  /** Its next timer (the fallback, then the end of its validity) and who holds it. */
  due_at: number | null;
  lease_until: number | null;
}

/** One message that carried a one-time password. */
export interface OtpSendTable {
  message_id: string;
  otp_id: string;
  organisation_id: string;
  recipient: string;
  channel: string;
  template: string;
  sent_at: number;
}

/** Locked while a code is sent to a number, so one number has one pending code across the nodes. */
export interface OtpRecipientTable {
  organisation_id: string;
  recipient: string;
  created_at: number;
}

/** An organisation's own fraud guards (JSON lists; null: the defaults). */
export interface OrganisationFraudGuardTable {
  organisation_id: string;
  allowed_countries: string | null;
  velocity_limits: string | null;
  updated_at: number;
}

/** The last live lookup of a number, kept until `expires_at` (TERN_LOOKUP_CACHE_DAYS). Booleans as 0/1, null unknown. */
export interface NumberLookupTable {
  msisdn: string;
  valid: number | null;
  reachable: number | null;
  ported: number | null;
  roaming: number | null;
  current_mcc_mnc: string | null;
  current_network: string | null;
  original_mcc_mnc: string | null;
  original_network: string | null;
  connector: string;
  looked_up_at: number;
  expires_at: number;
}

/** A batch lookup accepted and not answered yet (see migration 038); `numbers` is a JSON array of the inputs. */
export interface LookupBatchTable {
  id: string;
  organisation_id: string;
  channel_id: string;
  numbers: string;
  callback_url: string;
  accepted_at: number;
  due_at: number;
  lease_until: number | null;
  attempts: Generated<number>;
}

export interface OrganisationSendingWindowTable {
  organisation_id: string;
  enabled: number;
  /** JSON: each weekday's `{from, to}` or null. */
  hours: string;
  holiday_calendar: string;
  /** JSON: configured days `YYYY-MM-DD`. */
  holidays: string;
  ramp_per_second: number;
  /** JSON: channels that opted in. */
  channel_ids: string;
  updated_at: number;
}

export interface SendingWindowRampTable {
  channel_id: string;
  opening: number;
  taken: number;
}

export interface MessageTemplateTable {
  id: string;
  channel_id: string;
  organisation_id: string;
  name: string;
  text: string;
  /** JSON: the names it uses, in order of first use. */
  variables: string;
  created_at: number;
  updated_at: number;
}

export interface ShortLinkTable {
  code: string;
  message_id: string;
  organisation_id: string;
  channel_id: string;
  url: string;
  created_at: number;
  expires_at: number;
}

export interface ShortLinkClickTable {
  id: string;
  code: string;
  message_id: string;
  channel_id: string;
  /** The visitor's address hashed with the link's code: tells repeat clicks apart, keeps no address. */
  visitor_hash: string;
  clicked_at: number;
}

/** One change made through a management interface (append-only). */
export interface AuditLogTable {
  /** UUIDv7: ordered by time. */
  id: string;
  at: number;
  /** The organisation changed; null: the platform (prices, connectors, routes). */
  organisation_id: string | null;
  /** KEY (an API key), OPERATOR (the operator key) or USER. */
  actor_type: string;
  actor_id: string;
  /** `create`, `update`, `delete` or a verb (`credit`, `rotate-secret`, `erase`) with the object type: `organisation.update`. */
  action: string;
  object_type: string;
  object_id: string | null;
  /** JSON, secrets removed; null: nothing (a creation's before, a deletion's after). */
  before_state: string | null;
  after_state: string | null;
  remote_address: string | null;
  request_id: string | null;
  /** REST, CONSOLE or CLI (what the client said it was). */
  interface: string;
}

export interface UserTable {
  id: string;
  organisation_id: string;
  email: string;
  name: string | null;
  role: string;
  password_hash: string | null;
  sso_subject: string | null;
  state: string;
  created_at: number;
  updated_at: number;
  signed_in_at: number | null;
}

export interface UserSessionTable {
  token_hash: string;
  user_id: string;
  created_at: number;
  expires_at: number;
}

export interface UserLinkTable {
  token_hash: string;
  id: string;
  kind: string;
  organisation_id: string;
  user_id: string | null;
  email: string;
  role: string;
  created_by: string | null;
  created_at: number;
  expires_at: number;
  used_at: number | null;
}

export interface SsoConfigTable {
  organisation_id: string;
  issuer: string;
  client_id: string;
  client_secret: string;
  allowed_domains: string;
  default_role: string;
  groups_claim: string;
  group_roles: string;
  updated_at: number;
}

export interface SsoLoginTable {
  state: string;
  organisation_id: string;
  nonce: string;
  code_verifier: string;
  created_at: number;
  expires_at: number;
}

export interface Database {
  users: UserTable;
  user_sessions: UserSessionTable;
  user_links: UserLinkTable;
  sso_configs: SsoConfigTable;
  sso_logins: SsoLoginTable;
  audit_log: AuditLogTable;
  content_retention_cursors: ContentRetentionCursorTable;
  message_templates: MessageTemplateTable;
  number_lookups: NumberLookupTable;
  lookup_batches: LookupBatchTable;
  contacts: ContactTable;
  otps: OtpTable;
  otp_sends: OtpSendTable;
  otp_recipients: OtpRecipientTable;
  organisation_fraud_guards: OrganisationFraudGuardTable;
  contact_groups: ContactGroupTable;
  contact_group_members: ContactGroupMemberTable;
  account_logins: AccountLoginTable;
  route_rollups: RouteRollupTable;
  connector_rates: ConnectorRateTable;
  margin_rollups: MarginRollupTable;
  message_attempts: MessageAttemptTable;
  delivery_quality: DeliveryQualityTable;
  nodes: NodeTable;
  smpp_binds: SmppBindTable;
  smpp_concat_parts: SmppConcatPartTable;
  connector_slots: ConnectorSlotTable;
  unmatched_receipts: UnmatchedReceiptTable;
  rate_windows: RateWindowTable;
  smpp_credentials: SmppCredentialTable;
  smpp_outbox: SmppOutboxTable;
  voice_audio: VoiceAudioTable;
  connectors: ConnectorTable;
  routes: RouteTable;
  connector_records: ConnectorRecordTable;
  webhook_deliveries: WebhookDeliveryTable;
  webhook_attempts: WebhookAttemptTable;
  unrouted_inbound: UnroutedInboundTable;
  rcs_conversations: RcsConversationTable;
  rcs_conversation_messages: RcsConversationMessageTable;
  organisations: OrganisationTable;
  channels: ChannelTable;
  credentials: CredentialTable;
  ledger: LedgerTable;
  settings: SettingTable;
  senders: SenderTable;
  prices: PriceTable;
  idempotency_keys: IdempotencyTable;
  messages: MessageTable;
  dispatch_queue: DispatchQueueTable;
  auth_lockouts: AuthLockoutTable;
  organisation_traffic_limits: OrganisationTrafficLimitTable;
  organisation_sending_windows: OrganisationSendingWindowTable;
  sending_window_ramps: SendingWindowRampTable;
  short_links: ShortLinkTable;
  short_link_clicks: ShortLinkClickTable;
  message_events: MessageEventTable;
  consumption_rollups: ConsumptionRollupTable;
  consumption_epochs: ConsumptionEpochTable;
  blacklist: BlacklistTable;
  campaigns: CampaignTable;
  transfers: TransferTable;
}

export type Dialect = 'sqlite' | 'postgres';
/** A handle to the database, or to a transaction on it. */
export type Db = Kysely<Database>;
