/** What a carrier connector is handed: a message as it goes to an operator. */
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
}

export type SubmitResult =
  | { ok: true; upstreamId: string }
  | { ok: false; temporary: boolean; code: string; reason: string };

export type ReceiptStatus = 'DELIVERED' | 'UNDELIVERED' | 'UNDELIVERABLE' | 'READ';

export interface ReceiptEvent {
  kind: 'receipt';
  connector: string;
  /** Tern's id when the operator echoes it back; else matched on `upstreamId`. */
  messageId?: string;
  upstreamId?: string;
  status: ReceiptStatus;
  detail?: string | null;
  /**
   * The message never reached the person (a voice call busy or unanswered): its charge is given back. Default:
   * only UNDELIVERABLE is refunded.
   */
  refund?: boolean;
  at: number;
}

export interface InboundEvent {
  kind: 'mo';
  connector: string;
  from: string;
  to: string;
  /** SMS: `{ text }`; RCS: a typed body (`TEXT`, `SUGGESTION`, `LOCATION`, `FILE`). */
  body: Record<string, unknown>;
  type: 'SMS' | 'RCS';
  at: number;
}

export type CarrierEvent = ReceiptEvent | InboundEvent;

/** Receives receipts and inbound messages; resolves once they are durably applied. */
export type CarrierEventSink = (events: CarrierEvent[]) => Promise<void>;

/**
 * One operator connection. `submit` must be idempotent on `OutboundMessage.id` where the operator supports it:
 * after a crash, a message whose submit outcome was not recorded is submitted again with the same id.
 */
export interface CarrierConnector {
  readonly name: string;
  submit(batch: OutboundMessage[]): Promise<SubmitResult[]>;
  start(sink: CarrierEventSink): Promise<void>;
  stop(): Promise<void>;
}
