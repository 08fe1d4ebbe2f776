import { toEuros } from '../domain/money.ts';
import { countryName } from '../domain/phone.ts';
import type { Channel } from '../../store/channels.ts';
import type { MessageRow } from '../../store/messages.ts';

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
  from: string | null;
  body: Record<string, unknown>;
  price?: { amount: number; currency: string; kind?: string };
  status?: {
    value: string;
    deliveryDate: string;
    detail: string | null;
    lookup?: { mccMnc: string; country: string | null; network: string | null };
  };
  refClient: string | null;
  callbackUrlStatus: string | null;
  callbackUrlMo: string | null;
  href: string;
  [extra: string]: unknown;
}

const PATHS: Record<string, string> = { SMS: '/sms/v1/messages', RCS: '/rcs/v1/messages', VOICE: '/voice/v1/messages' };

/**
 * The message object: the send answer, the GET body and every webhook body. One function, so the three can never
 * drift apart.
 */
export function messageObject(m: MessageRow, channel: Channel, base: string): MessageObject {
  const extra = m.extra ? (JSON.parse(m.extra) as Record<string, unknown>) : {};
  const obj: MessageObject = {
    messageId: m.id,
    acceptedAt: new Date(m.accepted_at).toISOString(),
    sentDate: new Date(m.send_at).toISOString(),
    ...(m.campaign_id ? { campaignId: m.campaign_id } : {}),
    ...(m.origin_message_id ? { originMessageId: m.origin_message_id } : {}),
    channel: { channelId: channel.id, name: channel.name, type: channel.type, flow: channel.flow },
    type: m.type,
    direction: m.direction,
    recipient: { to: m.recipient },
    from: m.sender,
    body: JSON.parse(m.body) as Record<string, unknown>,
    refClient: m.ref_client,
    callbackUrlStatus: m.callback_url_status,
    callbackUrlMo: m.callback_url_mo,
    href: `${base}${PATHS[m.type] ?? PATHS.SMS}/${m.id}`,
    ...extra,
  };
  if (m.direction === 'MT') {
    obj.price = { amount: toEuros(m.charged), currency: 'EUR', ...(m.price_kind && m.type !== 'SMS' ? { kind: m.price_kind } : {}) };
    obj.status = {
      value: m.status,
      deliveryDate: new Date(m.status_at).toISOString(),
      detail: m.status_detail,
      ...(m.mcc_mnc
        ? { lookup: { mccMnc: m.mcc_mnc, country: m.country ? countryName(m.country) : null, network: m.network } }
        : {}),
    };
  }
  return obj;
}
