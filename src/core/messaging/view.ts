import { omitNulls, setOwn } from '../../domain/absent.ts';
import { toEuros } from '../../domain/money.ts';
import { countryName } from '../../domain/phone.ts';
import type { Channel } from '../../store/channels.ts';
import type { MessageRow } from '../../store/messages.ts';

/** A field Tern does not know or the client did not set is absent, never null (typed clients refuse nulls). */
export interface MessageObject {
  messageId: string;
  acceptedAt: string;
  sentDate: string;
  campaignId?: string;
  originMessageId?: string;
  channel: { channelId: string; name: string; type: string; flow: string };
  type: string;
  direction: string;
  recipient: { to: string };
  from?: string;
  body: Record<string, unknown>;
  /** When the content retention or an erasure request emptied its body (ours). */
  contentErasedAt?: string;
  price?: { amount: number; currency: string; kind?: string };
  status?: {
    value: string;
    deliveryDate: string;
    detail?: string;
    lookup?: { mccMnc: string; country?: string; network?: string };
  };
  refClient?: string;
  callbackUrlStatus?: string;
  callbackUrlMo?: string;
  href: string;
  [extra: string]: unknown;
}

const PATHS: Record<string, string> = { SMS: '/sms/v1/messages', RCS: '/rcs/v1/messages', VOICE: '/voice/v1/messages' };

/**
 * The message object: the send answer, the GET body and every webhook body. One function, so the three can never
 * drift apart. Built a field at a time, each optional one only when present (spreading one-field objects into the
 * literal made it one of the costlier functions of a send); the keys keep their order.
 */
export function messageObject(m: MessageRow, channel: Channel, base: string): MessageObject {
  const obj: MessageObject = {
    messageId: m.id,
    acceptedAt: new Date(m.accepted_at).toISOString(),
    sentDate: new Date(m.send_at).toISOString(),
  } as MessageObject;
  if (m.campaign_id != null) obj.campaignId = m.campaign_id;
  if (m.origin_message_id != null) obj.originMessageId = m.origin_message_id;
  obj.channel = { channelId: channel.id, name: channel.name, type: channel.type, flow: channel.flow };
  obj.type = m.type;
  obj.direction = m.direction;
  obj.recipient = { to: m.recipient };
  if (m.sender != null) obj.from = m.sender;
  obj.body = omitNulls(JSON.parse(m.body) as Record<string, unknown>);
  if (m.content_erased_at != null) obj.contentErasedAt = new Date(m.content_erased_at).toISOString();
  if (m.ref_client != null) obj.refClient = m.ref_client;
  if (m.callback_url_status != null) obj.callbackUrlStatus = m.callback_url_status;
  if (m.callback_url_mo != null) obj.callbackUrlMo = m.callback_url_mo;
  obj.href = `${base}${PATHS[m.type] ?? PATHS.SMS}/${m.id}`;
  if (m.extra) {
    for (const [key, value] of Object.entries(omitNulls(JSON.parse(m.extra) as Record<string, unknown>))) setOwn(obj, key, value);
  }
  if (m.direction === 'MT') {
    obj.price =
      m.price_kind && m.type !== 'SMS' ? { amount: toEuros(m.charged), currency: 'EUR', kind: m.price_kind } : { amount: toEuros(m.charged), currency: 'EUR' };
    const status: NonNullable<MessageObject['status']> = { value: m.status, deliveryDate: new Date(m.status_at).toISOString() };
    if (m.status_detail != null) status.detail = m.status_detail;
    if (m.mcc_mnc) {
      const lookup: NonNullable<NonNullable<MessageObject['status']>['lookup']> = { mccMnc: m.mcc_mnc };
      const country = m.country ? countryName(m.country) : null;
      if (country != null) lookup.country = country;
      if (m.network != null) lookup.network = m.network;
      status.lookup = lookup;
    }
    obj.status = status;
  }
  return obj;
}
