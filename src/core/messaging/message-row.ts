import type { Channel } from '../../store/channels.ts';
import type { MessageRow } from '../../store/messages.ts';
import { utcDay } from '../../domain/dates.ts';

export interface OutboundRowInput {
  id: string;
  channel: Channel;
  type: 'SMS' | 'RCS' | 'VOICE';
  recipient: string;
  sender: string | null;
  /** The public body object of the message type. */
  body: unknown;
  encoding?: string | null;
  /** Billed units (SMS parts, started 30 s of call, 1 for RCS). */
  units: number;
  length: number;
  price: number;
  priceKind: string;
  refClient: string | null;
  callbackUrlStatus: string | null;
  callbackUrlMo: string | null;
  now: number;
  sendAt: number;
  validityUntil: number | null;
  country: string | null;
  network: { mccMnc: string | null; network: string | null } | null;
  source: string;
  campaignId?: string | null;
  smppCredentialId?: string | null;
  registeredDelivery?: number;
  /** Extra fields of the message object. */
  extra?: object | null;
}

/** The row of a new outbound (MT) message of any type, before the accept transaction charges and stores it. */
export function outboundMessageRow(i: OutboundRowInput): MessageRow {
  return {
    id: i.id,
    organisation_id: i.channel.organisationId,
    payer_id: i.channel.organisationId,
    channel_id: i.channel.id,
    campaign_id: i.campaignId ?? null,
    type: i.type,
    direction: 'MT',
    recipient: i.recipient,
    sender: i.sender,
    body: JSON.stringify(i.body),
    encoding: i.encoding ?? null,
    part_count: i.units,
    length: i.length,
    price: i.price,
    price_kind: i.priceKind,
    charged: 0,
    status: i.sendAt > i.now ? 'SCHEDULED' : 'ENROUTE',
    status_detail: null,
    status_at: i.now,
    ref_client: i.refClient,
    callback_url_status: i.callbackUrlStatus,
    callback_url_mo: i.callbackUrlMo,
    accepted_at: i.now,
    send_at: i.sendAt,
    validity_until: i.validityUntil,
    origin_message_id: null,
    country: i.country,
    mcc_mnc: i.network?.mccMnc ?? null,
    network: i.network?.network ?? null,
    upstream_id: null,
    connector: null,
    source: i.source,
    smpp_credential_id: i.smppCredentialId ?? null,
    registered_delivery: i.registeredDelivery ?? 0,
    day: utcDay(i.now),
    extra: i.extra ? JSON.stringify(i.extra) : null,
    attempts: 0,
    route: null,
    cost: null,
    content_erased_at: null,
  };
}
