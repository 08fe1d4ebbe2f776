/**
 * What the core needs from the outside world, as interfaces: operator connections (connectors), routing between
 * them, and the events they send back. Concrete connectors live in src/connectors and are created from data by a
 * registry; the core never imports one.
 */
import type { Lane } from '../domain/fair-queue.ts';
import type { RcsBody, RcsBodyProblem } from '../domain/rcs.ts';
import type { RoutableMessage, RouteStrategy } from '../domain/routing.ts';
import type { NumberLookup } from './lookup/enrich.ts';
import type { LiveStatus } from './lookup/number-status.ts';

/** A message as it goes to an operator. */
export interface OutboundMessage {
  id: string;
  type: string;
  channelId: string;
  organisationId: string;
  recipient: string;
  sender: string | null;
  /** The public body object (SMS: text, encoding, parts; RCS: the rich body; VOICE: text and audio). */
  body: Record<string, unknown>;
  validityUntil: number | null;
  registeredDelivery: number;
  /**
   * Which placement of the message this is: 1, then 2, 3… when the core places it again (a voice call whose line
   * was busy). A submit repeated after a crash carries the same number as the one it repeats.
   */
  attempt: number;
  /** Its dispatch lane (OTP and TRANSACTIONAL first): what a connector keeps of it for later goes in the same lane. */
  lane: Lane;
  /** Its channel's flow (TRANSACTIONAL, MARKETING, OTP), for operators that want the kind of traffic declared. */
  flow?: string;
}

export type SubmitResult =
  | { ok: true; upstreamId: string }
  /**
   * `retryAt`: when to try again (a temporary refusal that knows, e.g. the TPS window ends), instead of backoff.
   * `detail`: for a permanent refusal, the message's status detail when the operator said why (INVALID_PHONE_NUMBER).
   * `outcomeUnknown`: it went out and no answer came (the connection dropped, the answer timed out): the operator may
   * have taken it, and the message is sent again — a repeat the operator gets unless it deduplicates.
   */
  | { ok: false; temporary: boolean; code: string; reason: string; retryAt?: number; detail?: string; outcomeUnknown?: true };

/**
 * Whether this node may still send a message it claimed: its claim's lease has not run out (less a margin for clocks
 * that differ between nodes) and no renewal found the message claimed by another node. The database refuses a
 * lapsed claim's writes; this keeps its sends off the wire too.
 */
export interface SubmitFence {
  holds(messageId: string): boolean;
}

/** The result for a message whose claim was lost before it went out: not sent here, left to its new owner. */
export function fenced(): SubmitResult {
  return { ok: false, temporary: true, code: 'FENCED', reason: 'this node’s claim of the message ran out; another node sends it', retryAt: Date.now() };
}

/** Whether a result is `fenced()`: not sent, by this node's check or its connector's right before the wire. */
export function isFenced(result: SubmitResult): boolean {
  return !result.ok && result.code === 'FENCED';
}

export type ReceiptStatus = 'DELIVERED' | 'UNDELIVERED' | 'UNDELIVERABLE' | 'READ';

/** What an operator reports about a message it took. */
export interface ReceiptEvent {
  kind: 'receipt';
  connector: string;
  /** Tern's id when the operator echoes it back; else matched on `upstreamId`. */
  messageId?: string;
  upstreamId?: string;
  status: ReceiptStatus;
  /** Why (BUSY, NO_ANSWER, INVALID_PHONE_NUMBER…); the core decides what it means (a retry, a refund). */
  detail?: string | null;
  at: number;
  /** A call: how long it was answered, in ms. The core bills an answered call on it rather than on its recording. */
  answeredMs?: number;
}

/** A message from a person to one of the channels' numbers, short codes or agents. */
export interface InboundEvent {
  kind: 'mo';
  connector: string;
  from: string;
  to: string;
  /** SMS: `{ text }`; RCS: a typed body (`TEXT`, `SUGGESTION`, `LOCATION`, `FILE`). */
  body: Record<string, unknown>;
  type: 'SMS' | 'RCS';
  at: number;
  /** The operator's id for it (or one the connector made): a message handed over twice with it is stored once. */
  upstreamId?: string;
}

export type CarrierEvent = ReceiptEvent | InboundEvent;

/** Receives receipts and inbound messages; resolves once they are durably applied. */
export type CarrierEventSink = (events: CarrierEvent[]) => Promise<void>;

/**
 * A connector's state as the router sees it: messages go only to connectors that are UP. STANDBY: it runs on other
 * nodes, not this one (its binds are all held elsewhere): its messages are left to those nodes, not failed over.
 */
export type ConnectorState = 'CONNECTING' | 'UP' | 'THROTTLED' | 'DOWN' | 'STANDBY';

export interface ConnectorHealth {
  state: ConnectorState;
  since: number;
  lastError: string | null;
}

/** Something a connector keeps about its work: `data` is its own, `dueAt` when it wants `due` called for it. */
export interface ConnectorRecord {
  key: string;
  data: Record<string, unknown>;
  dueAt: number | null;
  /**
   * The lane of the message it is about: due records of the high lane (OTP, TRANSACTIONAL) are handed over before
   * the low lane's (a campaign's receipts). Absent: the high lane (timers that are not about a message's lane).
   */
  lane?: Lane;
}

/** Durable records of one connector, shared by every node that runs it. */
export interface ConnectorRecords {
  get(keys: string[]): Promise<Map<string, ConnectorRecord>>;
  /** Creates or replaces records; those with a due time are handed to `Connector.due` when it comes. */
  put(records: ConnectorRecord[]): Promise<void>;
  /** Up to `limit` records whose key starts with `prefix`, the greatest key first. */
  list(prefix: string, limit: number): Promise<ConnectorRecord[]>;
}

/** The minimal logger a connector writes to. */
export interface ConnectorLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/** What the core gives a running connector. */
export interface ConnectorContext {
  readonly name: string;
  readonly logger: ConnectorLogger;
  /** Receipts and inbound messages; resolves once they are durably applied (answer the operator only then). */
  emit(events: CarrierEvent[]): Promise<void>;
  /** Tells the router whether the connector can take messages now. */
  health(state: ConnectorState, lastError?: string | null): void;
  records: ConnectorRecords;
  /**
   * Takes `units` of the connector's rate (`perSecond`) for the whole cluster: every node running the connector
   * shares one budget, which holds in every sliding second. Refused with the time the units will fit.
   */
  throttle(units: number, perSecond: number): Promise<{ ok: true } | { ok: false; retryAt: number }>;
  /**
   * Which of the connector's `total` binds this node should hold now (slot numbers): a fair share per live node, a
   * dead node's slots taken over. Call it every few seconds; a slot not renewed is given up.
   */
  slots(total: number): Promise<number[]>;
  /** The absolute URL of the connector's own routes, `…/connectors/{name}` (for operator callbacks). */
  publicUrl(): string;
}

/** What a connector tells of itself beyond what the core counts (submits, errors, receipts). */
export interface ConnectorStats {
  /** Connections bound on this node. */
  binds?: number;
  /** Submits sent and not answered yet. */
  inFlight?: number;
  /**
   * Submits whose outcome was lost (a window dropped with its connection): the operator may have taken them; they are
   * submitted again, so they may arrive twice.
   */
  unknownOutcomes?: number;
  /** Submits the upstream recognised as repeats of one it already took (its Idempotent-Replayed answer): not sent twice. */
  repeatsRecognised?: number;
}

/** An HTTP request to a route a connector mounts (an operator's delivery-report callback, a simulator's injection). */
export interface ConnectorHttpRequest {
  method: string;
  /** The path below the connector's base (`/connectors/{name}`), with its query string removed. */
  path: string;
  query: Record<string, string | string[] | undefined>;
  headers: Record<string, string | string[] | undefined>;
  /** The parsed body (JSON or form fields), or undefined. */
  body: unknown;
  /** The raw body, for signature checks. */
  rawBody: string;
}

export interface ConnectorHttpResponse {
  status: number;
  body?: unknown;
  contentType?: string;
}

export interface ConnectorRoute {
  method: 'GET' | 'POST';
  /** Below `/connectors/{name}`, e.g. `/mo`. */
  path: string;
  /** `operator`: the operator key is required; `public`: the connector checks the caller itself (signatures). */
  access: 'operator' | 'public';
  handle(req: ConnectorHttpRequest): Promise<ConnectorHttpResponse>;
}

export interface RcsCapabilityAnswer {
  capable: boolean;
  features: string[];
}

/**
 * One operator connection. `submit` must be idempotent on the message id and attempt where the operator allows
 * it: after a crash, a message whose submit outcome was not recorded is submitted again with the same id and attempt.
 */
export interface Connector {
  readonly name: string;
  readonly kind: string;
  /**
   * Every receipt it emits names Tern's message id (it keeps the id with the placement): none of its receipts can
   * come before its placement is known, so none is ever kept waiting for one, and none is looked for after a send.
   */
  readonly receiptsNameMessage?: boolean;
  start(ctx: ConnectorContext): Promise<void>;
  stop(): Promise<void>;
  /**
   * `fence`, when given, says whether this node still holds each message's claim: a connector asks it right before a
   * message goes on the wire (after any wait for a window or a rate) and answers `fenced()` for one it no longer holds,
   * which another node may be sending already.
   */
  submit(batch: OutboundMessage[], fence?: SubmitFence): Promise<SubmitResult[]>;
  /**
   * Records whose due time came, claimed for this connector on this node alone; returns the ones to keep with a
   * new due time (the others are kept without one).
   */
  due?(records: ConnectorRecord[], now: number): Promise<ConnectorRecord[]>;
  /** HTTP routes of its own, mounted under `/connectors/{name}`. */
  routes?(): ConnectorRoute[];
  stats?(): ConnectorStats;
  /** RCS: whether a number can receive RCS, and which features its handset supports. */
  rcsCapability?(msisdn: string): Promise<RcsCapabilityAnswer>;
  /**
   * RCS: what in a body this connector's operator cannot carry (a field it has no place for, a combination it
   * refuses), or null. Asked at accept, so such a message is refused there rather than lost at submit.
   */
  rcsBodyProblem?(body: RcsBody): RcsBodyProblem | null;
  /** RCS: withdraws messages not delivered yet (before their SMS fallback goes out). */
  revoke?(messageIds: string[]): Promise<void>;
  /** Lookups: whether a number is reachable now and which network serves it (an HLR query). */
  numberStatus?(number: NumberLookup): Promise<LiveStatus>;
}

export interface RouteChoice {
  /** The rule that matched, or null when none did (the message cannot be routed at all). */
  route: string | null;
  /** What one part costs through this route (micro-euros), when the route says. */
  costPerPart: number | null;
  /** The route asks for a live lookup of the number before each send (`lookupBeforeSend`). */
  lookupBeforeSend: boolean;
  /** Every connector the route names, up or not (the message waits for the first when none is up). */
  names: string[];
  /** Connectors able to take the message now, in the order to try them (weighted pick first, then failover). */
  candidates: Connector[];
  /**
   * The connector drawn for the message runs on other nodes only (STANDBY here): the message is left to them rather
   * than failed over. Null otherwise.
   */
  elsewhere: string | null;
  /** How the route chose (weight when no route matched). */
  strategy?: RouteStrategy;
  /** Connectors a message is placed with at most through this route, counting re-routes after a failed delivery. */
  maxAttempts?: number;
  /** What a part costs through each connector the route names (by name), when known: its rate in force, else the route's. */
  costs?: ReadonlyMap<string, number | null>;
  /** Connectors left out because the message would be placed at a loss through them (the route does not allow it). */
  losing?: string[];
  /** Delivery rates (0 to 1) to the message's network by connector name, when the route looks at them; null: not known. */
  qualities?: ReadonlyMap<string, number | null>;
  /** Connectors left out because they deliver below the route's `minDeliveryRate`. */
  belowMinimum?: string[];
  /**
   * Why the route refuses the message: every connector it names would place it at a loss, and it does not allow
   * that. Null otherwise.
   */
  refused?: string | null;
}

/** What routing needs to know of a message's money: its parts, what was charged for it, and when it is placed. */
export interface RoutedMoney {
  parts: number;
  /** Micro-euros. */
  charged: number;
  at: number;
}

export type { RoutableMessage };

/** Counted by the registry for every connector, on this node. */
export interface ConnectorCounters {
  submitted: number;
  accepted: number;
  temporaryErrors: number;
  permanentErrors: number;
  errorsByCode: Record<string, number>;
  receipts: number;
  inbound: number;
}

/** What `GET /admin/v1/connectors/{id}` shows of a running connector, as this node sees it. */
export interface ConnectorLiveState {
  state: ConnectorState;
  since: number;
  lastError: string | null;
  binds: number | null;
  inFlight: number | null;
  unknownOutcomes: number;
  repeatsRecognised: number;
  counters: ConnectorCounters;
  /** Per second over the last minute. */
  submitsPerSecond: number;
  receiptsPerSecond: number;
}

/** Picks connectors for messages, and finds a running connector by name. */
export interface Router {
  /** `money`: to choose by cost and refuse a placement at a loss; `exclude`: connectors (by name) not to use. */
  route(m: RoutableMessage, money?: RoutedMoney, exclude?: ReadonlySet<string>): RouteChoice;
  connector(name: string): Connector | undefined;
  /** Whether the connector named so is being restarted (its definition changed): live again in a moment. */
  isStarting(name: string): boolean;
  /** A running connector's state on this node, or undefined when it does not run here. */
  state(name: string): ConnectorLiveState | undefined;
  /**
   * Whether any route matches on MCC/MNC or asks for a lookup before sending: only then is the network a number is on
   * now (the last live lookup) worth reading before routing.
   */
  usesNumberNetworks?(): boolean;
}

/** What the core needs to know of a kind of connector to store its definitions. */
export interface ConnectorKind {
  /** Fields of the definition that are secrets: stored sealed, never answered. */
  readonly secretFields: readonly string[];
  /**
   * Checks and completes a definition's settings (and secrets, which must all be present on creation); throws a
   * core error naming the field.
   */
  validate(settings: Record<string, unknown>, secrets: Record<string, string>): { settings: Record<string, unknown>; secrets: Record<string, string> };
}

export type ConnectorKinds = Readonly<Record<string, ConnectorKind>>;
