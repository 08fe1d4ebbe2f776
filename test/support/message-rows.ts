import { outboundMessageRow, type OutboundRowInput } from '../../src/core/messaging/message-row.ts';
import type { MessageRow } from '../../src/store/messages.ts';

/**
 * A one-part SMS to a French number as the store keeps it once accepted, for tests that write messages straight into
 * the store: what is not given is the plainest value (no sender, callbacks or reference; sent now).
 */
export function smsRow(
  given: Pick<OutboundRowInput, 'id' | 'channel' | 'recipient' | 'now'> &
    Partial<Pick<OutboundRowInput, 'price' | 'sendAt' | 'campaignId'>> & { text?: string },
): MessageRow {
  return outboundMessageRow({
    id: given.id,
    channel: given.channel,
    type: 'SMS',
    recipient: given.recipient,
    sender: null,
    body: { text: given.text ?? 'x' },
    units: 1,
    length: 1,
    price: given.price ?? 0,
    priceKind: 'SMS',
    refClient: null,
    callbackUrlStatus: null,
    callbackUrlMo: null,
    now: given.now,
    sendAt: given.sendAt ?? given.now,
    validityUntil: null,
    country: 'FR',
    network: null,
    source: 'test',
    ...(given.campaignId !== undefined && { campaignId: given.campaignId }),
  });
}
