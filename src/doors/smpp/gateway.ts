import type { Logger } from 'pino';
import { uuidv7 } from '../../domain/ids.ts';
import { messageStateOf, receiptErrorCode, receiptStatOf, receiptWanted, smppAddressOf } from './status.ts';
import type { ReceiptStat } from '../../protocols/smpp/receipt.ts';
import { isFinal, type MessageStatus } from '../../domain/status.ts';
import type { Metrics } from '../../metrics.ts';
import { buildMoDeliverSms, buildReceiptDeliverSm, type DeliverSmFields } from '../../protocols/smpp/deliver-sm.ts';
import type {
  BindMode,
  SmppBindRequest,
  SmppBindResult,
  SmppCancel,
  SmppConcatAdded,
  SmppConcatBudget,
  SmppConcatExpired,
  SmppConcatPart,
  SmppConcatStranded,
  SmppConcatTimedOut,
  SmppHandler,
  SmppMetricHook,
  SmppPrincipal,
  SmppQuery,
  SmppQueryResult,
  SmppSubmitResult,
} from './handler.ts';
import { SmppStatus } from '../../protocols/smpp/pdu.ts';
import type { SmppSubmit } from '../../protocols/smpp/submit.ts';
import type { MessageRow, SmppOutboxRow } from '../../core/types.ts';
import type { SmppOutbox } from '../../core/smpp/outbox.ts';
import { asCoreError, CoreError, isStorageError } from '../../core/errors.ts';
import { refusalStatus, submitErrorStatus } from './errors.ts';
import type { EventConsumer } from '../../core/events.ts';
import type { MessagingService } from '../../core/messaging/service.ts';
import type { SmsService } from '../../core/sms/service.ts';
import type { SmsSendInput } from '../../core/sms/prepare.ts';
import { normaliseRecipient } from '../../core/messaging/prepare.ts';
import { activeCredentialsOfChannels, type SmppCredentialService } from '../../core/tenancy/smpp-credentials.ts';
import type { TenancyService } from '../../core/tenancy/service.ts';
import type { AccessControl } from '../../core/tenancy/access.ts';
import type { SmppBinds } from '../../core/smpp/binds.ts';
import type { SmppConcatParts } from '../../core/smpp/concat-parts.ts';

/** A bind refused for its credentials is answered this late, then its connection closed: guessing costs time. */
const FAILED_BIND_ANSWER_MS = 1_000;

/**
 * The SMPP door into the messaging service: binds checked against SMPP credentials, submits sent through
 * `MessagingService.sendSms` (the same validation, billing, statuses and events as REST), query_sm and cancel_sm on
 * the same messages, and an event hook that turns final statuses of SMPP messages and MO of their channels into
 * deliver_sm rows of the SMPP outbox, written in the status change's own transaction.
 *
 * A message refused at accept (stored UNDELIVERABLE at no charge, as REST answers 201 UNDELIVERABLE) is answered
 * with an error command_status and gets no receipt: the ESME never had its id. The exception is a concatenated
 * message, whose earlier parts were already answered with its id: it also gets a REJECTD receipt when one was asked.
 */

export interface SmppGatewayPrincipal extends SmppPrincipal {
  /** The credential's id (also `key`). */
  credentialId: string;
  channelId: string;
  organisationId: string;
}

export interface SmppGatewayOptions {
  /** How long a receipt or MO waits for a receiver bind before it is dropped. */
  outboxTtlMs?: number;
}

export const DEFAULT_OUTBOX_TTL_MS = 72 * 3_600_000;

export type OutboxKind = 'RECEIPT' | 'MO';

/** deliver_sm fields as stored in the outbox (JSON, short_message in hex). */
export function encodeOutboxPdus(pdus: DeliverSmFields[]): string {
  return JSON.stringify(pdus.map((p) => ({ ...p, short_message: p.short_message.toString('hex') })));
}

export function decodeOutboxPdus(json: string): DeliverSmFields[] {
  const list = JSON.parse(json) as Array<Record<string, unknown>>;
  return list.map((p) => ({ ...p, short_message: Buffer.from(String(p['short_message'] ?? ''), 'hex') }) as DeliverSmFields);
}

function receiptPdu(m: MessageRow, stat: ReceiptStat): DeliverSmFields {
  const body = JSON.parse(m.body) as { text?: unknown };
  return buildReceiptDeliverSm({
    messageId: m.id,
    source: smppAddressOf(m.recipient),
    destination: smppAddressOf(m.sender ?? ''),
    stat,
    err: receiptErrorCode(stat, m.status_detail),
    submitDate: new Date(m.accepted_at),
    doneDate: new Date(m.status_at),
    ...(typeof body.text === 'string' && { text: body.text }),
  });
}

export class SmppGateway implements SmppHandler<SmppGatewayPrincipal> {
  private readonly boundListeners: Array<(credentialId: string) => void> = [];
  private readonly outboxTtlMs: number;

  constructor(
    private readonly tenancy: TenancyService,
    private readonly messaging: MessagingService,
    private readonly sms: SmsService,
    readonly credentials: SmppCredentialService,
    private readonly outbox: SmppOutbox,
    private readonly access: AccessControl,
    private readonly binds: SmppBinds,
    private readonly concatParts: SmppConcatParts,
    private readonly logger: Logger,
    opts: SmppGatewayOptions = {},
  ) {
    this.outboxTtlMs = opts.outboxTtlMs ?? DEFAULT_OUTBOX_TTL_MS;
  }

  /** Called when a receiver or transceiver of a credential binds (the outbox worker sends what waits). */
  onReceiverBound(listener: (credentialId: string) => void): void {
    this.boundListeners.push(listener);
  }

  async bind(req: SmppBindRequest): Promise<SmppBindResult<SmppGatewayPrincipal>> {
    const refusedUntil = await this.access.smppBindRefusedUntil(req.remoteAddress, req.systemId);
    if (refusedUntil !== null) {
      this.logger.info(
        { systemId: req.systemId, remote: req.remoteAddress, until: new Date(refusedUntil).toISOString() },
        'smpp bind refused: locked out after failed binds',
      );
      return { ok: false, status: SmppStatus.ESME_RBINDFAIL, answerAfterMs: FAILED_BIND_ANSWER_MS, close: true };
    }
    const auth = await this.credentials.authenticate(req.systemId, req.password, req.remoteAddress);
    if (!auth.ok && (auth.reason === 'UNKNOWN_SYSTEM_ID' || auth.reason === 'WRONG_PASSWORD')) {
      await this.access.smppBindFailed(req.remoteAddress, req.systemId);
      const status = auth.reason === 'UNKNOWN_SYSTEM_ID' ? SmppStatus.ESME_RINVSYSID : SmppStatus.ESME_RINVPASWD;
      return { ok: false, status, answerAfterMs: FAILED_BIND_ANSWER_MS, close: true };
    }
    if (!auth.ok) {
      this.logger.info({ systemId: req.systemId, remote: req.remoteAddress, reason: auth.reason }, 'smpp bind refused');
      return { ok: false, status: SmppStatus.ESME_RBINDFAIL };
    }
    const c = auth.credential;
    const channel = await this.tenancy.getChannel(c.channelId).catch(() => null);
    const org = await this.tenancy.findOrganisation(c.organisationId);
    if (!channel || channel.state !== 'ACTIVE' || !org || org.state !== 'ACTIVE') {
      this.logger.info({ systemId: req.systemId, reason: 'CHANNEL_OR_ORGANISATION_INACTIVE' }, 'smpp bind refused');
      return { ok: false, status: SmppStatus.ESME_RBINDFAIL };
    }
    return {
      ok: true,
      principal: {
        key: c.id,
        credentialId: c.id,
        systemId: c.systemId,
        maxBinds: c.maxBinds,
        tps: c.tps,
        window: c.window,
        channelId: c.channelId,
        organisationId: c.organisationId,
      },
    };
  }

  allocateMessageId(): string {
    return uuidv7();
  }

  /** At the credential's rate as it is now (it may have changed since the bind), not as it was at the bind. */
  async overRate(p: SmppGatewayPrincipal, units: number): Promise<boolean> {
    const credential = await this.credentials.get(p.credentialId);
    return this.access.smppOverRate(p.credentialId, credential?.tps ?? p.tps, units);
  }

  claimBind(p: SmppGatewayPrincipal, session: string): Promise<boolean> {
    return this.binds.claim(p.credentialId, session, p.maxBinds);
  }

  releaseBind(p: SmppGatewayPrincipal, session: string): void {
    this.binds
      .release(p.credentialId, session)
      .catch((err: unknown) => this.logger.warn({ err }, 'could not release an SMPP bind; it is freed when this node stops'));
  }

  /** Parts wait in the database: a customer's binds on several nodes may each carry some of a message's parts. */
  async addConcatPart(p: SmppGatewayPrincipal, part: SmppConcatPart, budget: SmppConcatBudget): Promise<SmppConcatAdded> {
    const added = await this.concatParts.add(p.credentialId, part, budget);
    // The credential was deleted while this session was bound.
    if (added.kind === 'gone') return { kind: 'refused', status: SmppStatus.ESME_RINVBNDSTS };
    return added;
  }

  takeExpiredConcat(now: number): Promise<SmppConcatTimedOut[]> {
    return this.concatParts.takeExpired(now);
  }

  takeStrandedConcat(now: number): Promise<SmppConcatStranded[]> {
    return this.concatParts.takeStranded(now);
  }

  nextConcatSweep(): Promise<number | null> {
    return this.concatParts.nextSweep();
  }

  async submit(p: SmppGatewayPrincipal, s: SmppSubmit): Promise<SmppSubmitResult> {
    const credential = await this.credentials.get(p.credentialId);
    // The credential was deleted or disabled while this session was bound.
    if (!credential || credential.state !== 'ACTIVE') {
      if (s.messageId !== undefined) await this.concatParts.drop(p.credentialId, s.messageId);
      return { status: SmppStatus.ESME_RINVBNDSTS };
    }
    const channel = await this.messaging.channel(p.channelId);
    if (channel.state !== 'ACTIVE') return this.refuse(p, s, SmppStatus.ESME_RSUBMITFAIL);
    if (s.text === '') return this.refuse(p, s, SmppStatus.ESME_RINVMSGLEN);
    const input: SmsSendInput = {
      to: s.destination.addr,
      text: s.text,
      ...(s.dataCoding === 8 && { encoding: 'UNICODE' as const }),
      from: s.source.addr === '' ? null : s.source.addr,
      sentDate: s.scheduleAt,
      source: 'SMPP',
      validityUntil: s.validUntil ? s.validUntil.getTime() : null,
      smppCredentialId: p.credentialId,
      registeredDelivery: s.registeredDelivery,
      ...(s.messageId !== undefined && { messageId: s.messageId }),
    };
    // A concatenated message's parts are deleted in the transaction that stores it.
    const storing = s.messageId === undefined ? undefined : this.concatParts.storedWith(p.credentialId, s.messageId);
    let row: MessageRow;
    try {
      row = await this.sms.send(channel, input, storing);
    } catch (err) {
      // The database failed under it: nothing was stored. The client keeps its bind and submits again (no
      // rejection receipt: the message is not refused, only not taken now).
      if (isStorageError(err)) return { status: submitErrorStatus(asCoreError(err)!.kind) };
      if (err instanceof CoreError) {
        this.logger.debug({ systemId: p.systemId, kind: err.kind, detail: err.detail }, 'smpp submit refused');
        return this.refuse(p, s, submitErrorStatus(err.kind));
      }
      // Stored meanwhile under its id by another node (this one was too slow): it stays as that node stored it.
      const [stored] = s.messageId === undefined ? [] : await this.messaging.getMany([s.messageId]);
      if (stored && stored.smpp_credential_id === p.credentialId) {
        return stored.status === 'UNDELIVERABLE' ? { status: refusalStatus(stored.status_detail) } : { messageId: stored.id };
      }
      throw err;
    }
    if (row.status === 'UNDELIVERABLE') {
      const status = refusalStatus(row.status_detail);
      if (s.messageId !== undefined && s.receiptRequested) await this.enqueue([this.receiptRow(p.credentialId, row, 'REJECTD')]);
      return { status };
    }
    return { messageId: row.id };
  }

  /**
   * A refusal with nothing stored. A concatenated message's id was already given with its earlier parts, so when a
   * receipt was asked for it gets a REJECTD one, in the transaction that deletes its parts.
   */
  private async refuse(p: SmppGatewayPrincipal, s: SmppSubmit, status: number): Promise<SmppSubmitResult> {
    if (s.messageId === undefined) return { status };
    const receipts: SmppOutboxRow[] = [];
    if (s.receiptRequested) {
      const now = Date.now();
      const pdu = buildReceiptDeliverSm({
        messageId: s.messageId,
        source: s.destination,
        destination: s.source,
        stat: 'REJECTD',
        err: receiptErrorCode('REJECTD', null),
        submitDate: new Date(now),
        doneDate: new Date(now),
        text: s.text,
      });
      receipts.push(this.outboxRow(p.credentialId, 'RECEIPT', s.messageId, [pdu], now));
    }
    await this.concatParts.drop(p.credentialId, s.messageId, (db) => this.outbox.enqueue(receipts, db));
    return { status };
  }

  async query(p: SmppGatewayPrincipal, q: SmppQuery): Promise<SmppQueryResult> {
    const [m] = q.messageId === '' ? [] : await this.messaging.getMany([q.messageId]);
    if (!m || m.channel_id !== p.channelId || m.direction !== 'MT' || m.type !== 'SMS') {
      return { status: SmppStatus.ESME_RINVMSGID };
    }
    const status = m.status as MessageStatus;
    const final = isFinal(status);
    const stat = receiptStatOf(status, m.status_detail) ?? (final ? 'DELIVRD' : null);
    return {
      messageId: m.id,
      state: messageStateOf(status, m.status_detail),
      finalDate: final ? new Date(m.status_at) : null,
      errorCode: final && stat ? receiptErrorCode(stat, m.status_detail) : 0,
    };
  }

  async cancel(p: SmppGatewayPrincipal, c: SmppCancel): Promise<{ status: number }> {
    let ids: string[];
    if (c.messageId !== '') {
      ids = [c.messageId];
    } else {
      // Every scheduled message of this credential from source_addr to destination_addr.
      const { defaultCountry } = await this.tenancy.locale(p.organisationId);
      let recipient: string;
      try {
        recipient = normaliseRecipient(c.destination.addr, 'destination_addr', defaultCountry);
      } catch {
        return { status: SmppStatus.ESME_RCANCELFAIL };
      }
      const rows = await this.messaging.list({
        channelIds: [p.channelId],
        direction: 'MT',
        type: 'SMS',
        status: 'SCHEDULED',
        recipient,
        from: 0,
        to: Number.MAX_SAFE_INTEGER,
        offset: 0,
        limit: 10_000,
      });
      ids = rows.filter((m) => m.smpp_credential_id === p.credentialId && (c.source.addr === '' || m.sender === c.source.addr)).map((m) => m.id);
      if (ids.length === 0) return { status: SmppStatus.ESME_RCANCELFAIL };
    }
    for (const id of ids) {
      try {
        await this.messaging.cancel(id, [p.channelId], 'SMS');
      } catch (err) {
        if (!(err instanceof CoreError)) throw err;
        if (err.kind === 'NOT_FOUND') return { status: SmppStatus.ESME_RINVMSGID };
        return { status: SmppStatus.ESME_RCANCELFAIL };
      }
    }
    return { status: 0 };
  }

  concatExpired(p: SmppGatewayPrincipal, e: SmppConcatExpired): void {
    this.logger.info(
      { systemId: p.systemId, messageId: e.messageId, received: e.received, total: e.total },
      'smpp concatenated message never completed; nothing was sent or charged',
    );
  }

  onBound(p: SmppGatewayPrincipal, _mode: BindMode): void {
    for (const l of this.boundListeners) l(p.credentialId);
  }

  /**
   * Event hook (inside every accept, status and inbound transaction): receipts for final statuses of SMPP messages
   * that asked for one, and MO of SMS channels that have SMPP credentials.
   */
  readonly hook: EventConsumer = async (tx, events, messages) => {
    const rows: SmppOutboxRow[] = [];
    let mos: MessageRow[] | undefined;
    for (const e of events) {
      const m = messages.get(e.message_id);
      if (!m) continue;
      if (e.kind === 'STATUS') {
        if (m.source !== 'SMPP' || !m.smpp_credential_id) continue;
        const stat = receiptStatOf(e.status as MessageStatus, e.detail);
        if (!stat || !receiptWanted(m.registered_delivery, stat)) continue;
        rows.push(this.receiptRow(m.smpp_credential_id, m, stat, e.at));
      } else if (e.kind === 'MO' && m.type === 'SMS' && m.direction === 'MO') {
        (mos ??= []).push(m);
      }
    }
    if (mos) {
      const creds = await activeCredentialsOfChannels(tx, [...new Set(mos.map((m) => m.channel_id))]);
      for (const m of mos) {
        const targets = creds.filter((c) => c.channelId === m.channel_id);
        if (targets.length === 0) continue;
        const pdus = this.moPdus(m);
        if (!pdus) continue;
        for (const c of targets) rows.push(this.outboxRow(c.id, 'MO', m.id, pdus, m.accepted_at));
      }
    }
    await this.outbox.enqueue(rows, tx);
  };

  private moPdus(m: MessageRow): DeliverSmFields[] | null {
    const body = JSON.parse(m.body) as { text?: unknown };
    if (typeof body.text !== 'string' || body.text === '') return null;
    try {
      // The concatenation reference comes from the id's random tail, so two long MO rarely share one.
      return buildMoDeliverSms({
        source: smppAddressOf(m.sender ?? ''),
        destination: smppAddressOf(m.recipient),
        text: body.text,
        ref: parseInt(m.id.slice(-2), 16),
      });
    } catch (err) {
      this.logger.warn({ err, messageId: m.id }, 'smpp: MO text cannot be sent as deliver_sm');
      return null;
    }
  }

  private receiptRow(credentialId: string, m: MessageRow, stat: ReceiptStat, at = Date.now()): SmppOutboxRow {
    return this.outboxRow(credentialId, 'RECEIPT', m.id, [receiptPdu(m, stat)], at);
  }

  private outboxRow(credentialId: string, kind: OutboxKind, messageId: string, pdus: DeliverSmFields[], at: number): SmppOutboxRow {
    const now = Math.max(at, Date.now());
    return {
      id: uuidv7(now),
      credential_id: credentialId,
      kind,
      message_id: messageId,
      pdus: encodeOutboxPdus(pdus),
      created_at: now,
      expires_at: now + this.outboxTtlMs,
      attempts: 0,
      next_attempt_at: now,
      lease_until: null,
    };
  }

  private enqueue(rows: SmppOutboxRow[]): Promise<void> {
    return this.outbox.enqueue(rows);
  }
}

/** Which extra labels each SMPP server metric carries besides system_id. */
const METRIC_LABELS = {
  smpp_binds_total: ['mode'],
  smpp_bind_failures_total: ['status'],
  smpp_submits_total: [],
  smpp_submit_parts_total: [],
  smpp_errors_total: ['command', 'status', 'reason'],
  smpp_throttled_total: [],
  smpp_delivers_total: ['outcome'],
  smpp_sessions: [],
} as const;

/** Feeds the SMPP server's metric hook into the Prometheus registry. */
export function smppMetricHook(metrics: Metrics): SmppMetricHook {
  return (name, labels, value) => {
    const values: Record<string, string> = { system_id: labels['system_id'] ?? '' };
    for (const l of METRIC_LABELS[name]) values[l] = labels[l] ?? '';
    switch (name) {
      case 'smpp_sessions':
        metrics.smppSessions.set(values, value);
        return;
      case 'smpp_binds_total':
        metrics.smppBinds.inc(values, value);
        return;
      case 'smpp_bind_failures_total':
        metrics.smppBindFailures.inc(values, value);
        return;
      case 'smpp_submits_total':
        metrics.smppSubmits.inc(values, value);
        return;
      case 'smpp_submit_parts_total':
        metrics.smppSubmitParts.inc(values, value);
        return;
      case 'smpp_errors_total':
        metrics.smppErrors.inc(values, value);
        return;
      case 'smpp_throttled_total':
        metrics.smppThrottled.inc(values, value);
        return;
      case 'smpp_delivers_total':
        metrics.smppDelivers.inc(values, value);
        return;
    }
  };
}
