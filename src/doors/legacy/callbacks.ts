import { formatLegacyReplyDate, formatLegacyReportDate } from './dates.ts';
import { legacyStatusOf } from './status.ts';
import { toEuros } from '../../domain/money.ts';
import { isMessageStatus } from '../../domain/status.ts';
import type { EventConsumer } from '../../core/events.ts';
import type { Channel, MessageEventRow, MessageRow, Tx } from '../../core/types.ts';
import { originOf, setExtra } from '../../core/messaging/extra.ts';

/**
 * Fields of a legacy send kept in the message's `extra` (and so shown in its REST object): where its callbacks go,
 * and the `smsID` the legacy client knows it by.
 */
export interface LegacyExtra {
  /** `notification_url`: delivery reports, as GET requests. */
  legacyNotificationUrl?: string;
  /** `notification_url_reponse`: replies (MO), as GET requests. */
  legacyReplyUrl?: string;
  /** The `smsID` of the legacy send (the campaign of a send to several numbers). */
  legacySmsId?: string;
  /** `classe_msg` of sendSMS.do. */
  legacyClass?: number;
  /** The organisation's time zone when the send was made: the callbacks' dates are written in it. */
  legacyTimeZone?: string;
}

type WebhookRequest = { url: string; method: 'GET' | 'POST'; query?: Record<string, string>; body?: string };

function extraOf(m: MessageRow): LegacyExtra {
  if (!m.extra) return {};
  try {
    return JSON.parse(m.extra) as LegacyExtra;
  } catch {
    return {};
  }
}

/** The `smsID` a legacy client knows a message by. */
export function legacySmsIdOf(m: Pick<MessageRow, 'id' | 'campaign_id'>): string {
  return m.campaign_id ?? m.id;
}

/** `cost`: what the message cost, in the account's money (Tern's credits are euros). */
function cost(m: MessageRow): string {
  return String(toEuros(m.charged));
}

/**
 * The legacy 1.6 callbacks of an event, in the webhook outbox's format: a GET to `notification_url` for each final
 * status of a legacy message (the statuses that have a legacy code), a GET to `notification_url_reponse` for a reply.
 * Null for messages without legacy URLs, so they get the JSON webhooks like any other.
 */
export function legacyWebhookFormatter(m: MessageRow, event: MessageEventRow, _channel: Channel): WebhookRequest[] | null {
  const extra = extraOf(m);
  if (event.kind === 'MO') {
    if (!extra.legacyReplyUrl) return null;
    const body = JSON.parse(m.body) as { text?: unknown };
    return [
      {
        url: extra.legacyReplyUrl,
        method: 'GET',
        query: {
          numero: m.recipient,
          message: typeof body.text === 'string' ? body.text : '',
          emetteur: m.sender ?? '',
          date_reception: formatLegacyReplyDate(event.at, extra.legacyTimeZone),
          smsID: extra.legacySmsId ?? m.origin_message_id ?? '',
          refClient: m.ref_client ?? '',
          responseID: m.id,
        },
      },
    ];
  }
  if (!extra.legacyNotificationUrl) return null;
  if (!isMessageStatus(event.status) || event.status === 'SCHEDULED' || event.status === 'ENROUTE') return [];
  const legacy = legacyStatusOf(event.status, event.detail, m.type);
  if (!legacy) return [];
  return [
    {
      url: extra.legacyNotificationUrl,
      method: 'GET',
      query: {
        numero: m.recipient,
        date_reception: formatLegacyReportDate(event.at, extra.legacyTimeZone),
        statut: String(legacy.code),
        smsID: extra.legacySmsId ?? legacySmsIdOf(m),
        refClient: m.ref_client ?? '',
        cost: cost(m),
        mcc_mnc: m.mcc_mnc ?? '',
      },
    },
  ];
}

/**
 * Links a reply to its legacy send: when the MT a reply answers asked for `notification_url_reponse`, the reply
 * carries that URL and the send's `smsID` in its `extra`, so its callback goes there. Must run before the webhook
 * outbox's hook, in the same transaction.
 */
export const legacyReplyLinkHook: EventConsumer = async (tx: Tx, events, messages) => {
  for (const e of events) {
    if (e.kind !== 'MO') continue;
    const mo = messages.get(e.message_id);
    if (!mo?.origin_message_id) continue;
    const origin = await originOf(tx, mo.origin_message_id);
    if (!origin?.extra) continue;
    const originExtra = JSON.parse(origin.extra) as LegacyExtra;
    if (!originExtra.legacyReplyUrl) continue;
    const extra = {
      ...extraOf(mo),
      legacyReplyUrl: originExtra.legacyReplyUrl,
      legacySmsId: originExtra.legacySmsId ?? legacySmsIdOf(origin),
      ...(originExtra.legacyTimeZone ? { legacyTimeZone: originExtra.legacyTimeZone } : {}),
    };
    mo.extra = JSON.stringify(extra);
    await setExtra(tx, mo.id, mo.extra);
  }
};
