import type { ConcatPartInput } from '../../core/smpp/concat-parts.ts';
import type { SmppAddress, SmppSubmit } from '../../protocols/smpp/submit.ts';

/**
 * What the SMPP server needs from the messaging service. The server owns the protocol (binds, windows,
 * throttling, reassembly); the handler owns credentials, billing, storage and receipts.
 */

export type BindMode = 'transmitter' | 'receiver' | 'transceiver';

export interface SmppBindRequest {
  systemId: string;
  password: string;
  systemType: string;
  mode: BindMode;
  remoteAddress: string;
}

/** An authenticated SMPP credential. `key` identifies it (sessions, throttling and reassembly are per key). */
export interface SmppPrincipal {
  key: string;
  systemId: string;
  /** Sessions bound at once (any mode); one more gets ESME_RBINDFAIL. */
  maxBinds: number;
  /** submit_sm (and submit_multi destinations) a second; above it ESME_RTHROTTLED. 0 or less: no limit. */
  tps: number;
  /** deliver_sm unanswered at once on each of its sessions; 0 or absent: the server's window. */
  window?: number;
}

/**
 * Refusals use SMPP command_status values: ESME_RINVPASWD (wrong password), ESME_RINVSYSID (unknown system_id),
 * ESME_RBINDFAIL (credential disabled).
 */
/**
 * A refused bind may ask to be answered late and the connection closed (a failed authentication: guessing is slowed
 * down to one try a connection and a second).
 */
export type SmppBindResult<P extends SmppPrincipal> = { ok: true; principal: P } | { ok: false; status: number; answerAfterMs?: number; close?: boolean };

/**
 * Suggested command_status for submit refusals: insufficient credit ESME_RSUBMITFAIL (0x45), invalid destination
 * ESME_RINVDSTADR (0x0B), invalid source ESME_RINVSRCADR (0x0A), over a daily/monthly limit ESME_RTHROTTLED (0x58),
 * anything unexpected ESME_RSYSERR (0x08). A handler that throws is answered with ESME_RSYSERR.
 */
export type SmppSubmitResult = { messageId: string } | { status: number };

export interface SmppQuery {
  messageId: string;
  source: SmppAddress;
}

export type SmppQueryResult = { messageId: string; state: number; finalDate: Date | null; errorCode: number } | { status: number };

export interface SmppCancel {
  /** Empty: cancel every scheduled message from `source` to `destination` (with `serviceType`). */
  messageId: string;
  serviceType: string;
  source: SmppAddress;
  destination: SmppAddress;
}

export interface SmppReplace {
  messageId: string;
  source: SmppAddress;
  /** The new short_message as received: replace_sm has no data_coding, it keeps the original message's. */
  shortMessage: Buffer;
  /** `shortMessage` read as GSM 7-bit (data_coding 0); decode `shortMessage` yourself for other codings. */
  text: string;
  scheduleAt: Date | null;
  validUntil: Date | null;
  registeredDelivery: number;
}

export interface SmppConcatExpired {
  /** The id every received part was answered with. */
  messageId: string;
  source: SmppAddress;
  destination: SmppAddress;
  received: number;
  total: number;
}

/** A part of a concatenated submit, to keep until its message is whole (the core's own description of one). */
export type SmppConcatPart = ConcatPartInput;

/** Parts and octets one principal may have waiting, all its messages together. */
export interface SmppConcatBudget {
  maxParts: number;
  maxBytes: number;
}

export type SmppConcatAdded =
  /** Stored (partial), or already there (duplicate): answered with the message's id. */
  | { kind: 'partial' | 'duplicate'; messageId: string }
  /** The part's total disagrees with the parts already there. */
  | { kind: 'inconsistent'; messageId: string }
  /** This part made the message whole (the parts are taken, in order; `meta` is part 1's): submit it. */
  | { kind: 'complete'; messageId: string; parts: Array<{ payload: Buffer; dataCoding: number }>; meta: string }
  | { kind: 'over-budget'; parts: number; bytes: number }
  | { kind: 'refused'; status: number };

/**
 * A message made whole whose submit never finished (the node that took it stopped, or failed to store it): to submit
 * again with its id, as the node that took it would have.
 */
export interface SmppConcatStranded {
  messageId: string;
  parts: Array<{ payload: Buffer; dataCoding: number }>;
  meta: string;
}

/** A message whose parts stopped arriving; `meta` is part 1's, or the first part's received. */
export interface SmppConcatTimedOut {
  messageId: string;
  received: number;
  total: number;
  meta: string;
}

export interface SmppHandler<P extends SmppPrincipal = SmppPrincipal> {
  bind(request: SmppBindRequest): Promise<SmppBindResult<P>>;
  /** A Tern message id, for parts answered before their message is complete. */
  allocateMessageId(): string;
  /**
   * One call per message, however many parts it came in; `submit.messageId`, when set, must be used, and a message
   * already stored under it is not stored again (a stranded message may be submitted twice).
   */
  submit(principal: P, submit: SmppSubmit): Promise<SmppSubmitResult>;
  query?(principal: P, query: SmppQuery): Promise<SmppQueryResult>;
  /** `{ status: 0 }` when cancelled, else e.g. ESME_RCANCELFAIL or ESME_RINVMSGID. */
  cancel?(principal: P, cancel: SmppCancel): Promise<{ status: number }>;
  replace?(principal: P, replace: SmppReplace): Promise<{ status: number }>;
  /** Parts of a concatenated message stopped arriving: its id was given out, the message never came whole. */
  concatExpired?(principal: P, expired: SmppConcatExpired): void;
  /** A receiver or transceiver session of this principal is bound: held receipts and MO can be sent now. */
  onBound?(principal: P, mode: BindMode): void;
  /**
   * Whether `units` more submits would go past the principal's `tps` across every node; without it each server
   * counts its own sessions only.
   */
  overRate?(principal: P, units: number): Promise<boolean>;
  /**
   * Whether this session may hold one more of the principal's `maxBinds` across every node (it then holds it until
   * `releaseBind`); without it each server counts its own sessions only.
   */
  claimBind?(principal: P, session: string): Promise<boolean>;
  releaseBind?(principal: P, session: string): void;
  /**
   * Keeps a part of a concatenated submit where every node sees it, within the principal's budget, and says whether it
   * made its message whole (for one caller only, on whichever node). Without it each server keeps the parts it
   * received in memory, and a message whose parts reach two nodes is never whole.
   */
  addConcatPart?(principal: P, part: SmppConcatPart, budget: SmppConcatBudget): Promise<SmppConcatAdded>;
  /** With addConcatPart: takes the messages whose time ran out (each is taken by one caller only). */
  takeExpiredConcat?(now: number): Promise<SmppConcatTimedOut[]>;
  /** With addConcatPart: takes the whole messages stranded by a node that did not submit them (one caller each). */
  takeStrandedConcat?(now: number): Promise<SmppConcatStranded[]>;
  /** With addConcatPart: when parts are next due to be taken (expired or stranded); null when none wait. */
  nextConcatSweep?(): Promise<number | null>;
}

/**
 * Metrics: names ending in `_total` are counters and `value` is the increment; others are gauges and `value` is
 * the current level. Labels always carry `system_id`.
 */
export type SmppMetric =
  | 'smpp_binds_total'
  | 'smpp_bind_failures_total'
  | 'smpp_submits_total'
  | 'smpp_submit_parts_total'
  | 'smpp_errors_total'
  | 'smpp_throttled_total'
  | 'smpp_delivers_total'
  | 'smpp_sessions';

export type SmppMetricHook = (name: SmppMetric, labels: Record<string, string>, value: number) => void;

/** The subset of a pino logger the server uses. */
export interface SmppLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}
