/**
 * What RBM posts to an agent's webhook (the "Webhooks", "Receive events" and "Receive messages" guides): first a
 * verification request `{clientToken, secret}`, then Pub/Sub push envelopes `{message: {data, messageId,
 * publishTime}, subscription}` whose `data` is a base64 JSON event signed in `X-Goog-Signature` (base64 of
 * HMAC-SHA512 of the decoded data, keyed with the client token).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { CarrierEvent } from '../../core/ports.ts';

export type WebhookRequest =
  | { kind: 'verification'; clientToken: string; secret: string }
  | { kind: 'push'; data: Buffer }
  | { kind: 'invalid'; reason: string };

/** Which of RBM's requests a body is. */
export function readWebhook(body: unknown): WebhookRequest {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return { kind: 'invalid', reason: 'expected a JSON object' };
  const b = body as { clientToken?: unknown; secret?: unknown; message?: { data?: unknown } };
  if (typeof b.clientToken === 'string' && typeof b.secret === 'string') return { kind: 'verification', clientToken: b.clientToken, secret: b.secret };
  const data = b.message && typeof b.message === 'object' ? b.message.data : undefined;
  if (typeof data !== 'string' || data === '' || !/^[A-Za-z0-9+/_-]*={0,2}$/.test(data)) {
    return { kind: 'invalid', reason: 'expected a verification request or a push envelope with message.data (base64)' };
  }
  return { kind: 'push', data: Buffer.from(data, 'base64') };
}

/** Whether `X-Goog-Signature` is the client token's HMAC-SHA512 of the decoded data. */
export function signatureHolds(data: Buffer, header: string | string[] | undefined, clientToken: string): boolean {
  const given = Array.isArray(header) ? header[0] : header;
  if (typeof given !== 'string' || given === '') return false;
  const expected = createHmac('sha512', clientToken).update(data).digest();
  const got = Buffer.from(given, 'base64');
  return got.length === expected.length && timingSafeEqual(got, expected);
}

function timeOf(value: unknown): number {
  const t = typeof value === 'string' ? Date.parse(value) : NaN;
  return Number.isNaN(t) ? Date.now() : t;
}

const str = (v: unknown): v is string => typeof v === 'string' && v !== '';

/** What a user sent, as Tern's RCS MO body; null when it is none of text, a suggestion, a location or a file. */
function userMessageBody(e: Record<string, unknown>): Record<string, unknown> | null {
  if (typeof e.text === 'string') return { type: 'TEXT', text: e.text };
  const s = e.suggestionResponse as { postbackData?: unknown; text?: unknown } | undefined;
  if (s && typeof s === 'object')
    return { type: 'SUGGESTION', text: typeof s.text === 'string' ? s.text : '', postbackData: typeof s.postbackData === 'string' ? s.postbackData : '' };
  const l = e.location as { latitude?: unknown; longitude?: unknown } | undefined;
  if (l && typeof l === 'object' && typeof l.latitude === 'number' && typeof l.longitude === 'number')
    return { type: 'LOCATION', latitude: l.latitude, longitude: l.longitude };
  const f = e.userFile as { payload?: { mimeType?: unknown; fileName?: unknown; fileUri?: unknown }; thumbnail?: { fileUri?: unknown } } | undefined;
  if (f && typeof f === 'object' && f.payload && str(f.payload.fileUri)) {
    return {
      type: 'FILE',
      fileUrl: f.payload.fileUri,
      filename: str(f.payload.fileName) ? f.payload.fileName : 'file',
      contentType: str(f.payload.mimeType) ? f.payload.mimeType : 'application/octet-stream',
      ...(f.thumbnail && str(f.thumbnail.fileUri) && { thumbnailUrl: f.thumbnail.fileUri }),
    };
  }
  return null;
}

/**
 * An event of the decoded data as the core's events: DELIVERED and READ as receipts of the agent message they name,
 * TTL_EXPIRATION_REVOKED as UNDELIVERED (the core falls back to SMS), a user's message as an RCS MO to the agent
 * (addressed to the connector's agent id: the RCS channel lists it as its sender).
 * IS_TYPING and what Tern has no use for (launch changes, a revocation that failed) give nothing. Null: not an event.
 */
export function coreEvents(data: Buffer, connector: string, agentId: string): CarrierEvent[] | null {
  let e: unknown;
  try {
    e = JSON.parse(data.toString('utf8'));
  } catch {
    return null;
  }
  if (!e || typeof e !== 'object' || Array.isArray(e)) return null;
  const ev = e as Record<string, unknown>;
  const at = timeOf(ev.sendTime);
  if (str(ev.eventType)) {
    if (!str(ev.messageId)) return [];
    switch (ev.eventType) {
      case 'DELIVERED':
      case 'READ':
        return [{ kind: 'receipt', connector, upstreamId: ev.messageId, status: ev.eventType, detail: null, at }];
      case 'TTL_EXPIRATION_REVOKED':
        return [{ kind: 'receipt', connector, upstreamId: ev.messageId, status: 'UNDELIVERED', detail: 'TTL_EXPIRATION_REVOKED', at }];
      default:
        return [];
    }
  }
  const body = userMessageBody(ev);
  if (!body || !str(ev.senderPhoneNumber)) return str(ev.senderPhoneNumber) ? [] : null;
  return [
    {
      kind: 'mo',
      connector,
      type: 'RCS',
      from: ev.senderPhoneNumber.replace(/^\+/, ''),
      to: agentId,
      body,
      at,
      ...(str(ev.messageId) && { upstreamId: ev.messageId }),
    },
  ];
}
