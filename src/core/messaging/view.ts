import { omitNulls, present } from '../domain/absent.ts';
import { toEuros } from '../domain/money.ts';
import { countryName } from '../domain/phone.ts';
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
 * drift apart.
 */
export function messageObject(m: MessageRow, channel: Channel, base: string): MessageObject {
  const extra = m.extra ? omitNulls(JSON.parse(m.extra) as Record<string, unknown>) : {};
  const obj: MessageObject = {
    messageId: m.id,
    acceptedAt: new Date(m.accepted_at).toISOString(),
    sentDate: new Date(m.send_at).toISOString(),
    ...present('campaignId', m.campaign_id),
    ...present('originMessageId', m.origin_message_id),
    channel: { channelId: channel.id, name: channel.name, type: channel.type, flow: channel.flow },
    type: m.type,
    direction: m.direction,
    recipient: { to: m.recipient },
    ...present('from', m.sender),
    body: omitNulls(JSON.parse(m.body) as Record<string, unknown>),
    ...present('refClient', m.ref_client),
    ...present('callbackUrlStatus', m.callback_url_status),
    ...present('callbackUrlMo', m.callback_url_mo),
    href: `${base}${PATHS[m.type] ?? PATHS.SMS}/${m.id}`,
    ...extra,
  };
  if (m.direction === 'MT') {
    obj.price = { amount: toEuros(m.charged), currency: 'EUR', ...(m.price_kind && m.type !== 'SMS' ? { kind: m.price_kind } : {}) };
    obj.status = {
      value: m.status,
      deliveryDate: new Date(m.status_at).toISOString(),
      ...present('detail', m.status_detail),
      ...(m.mcc_mnc
        ? { lookup: { mccMnc: m.mcc_mnc, ...present('country', m.country ? countryName(m.country) : null), ...present('network', m.network) } }
        : {}),
    };
  }
  return obj;
}
