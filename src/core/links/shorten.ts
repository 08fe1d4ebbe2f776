import { shortenUrls } from '../../domain/short-links.ts';
import type { Channel } from '../../store/channels.ts';
import type { ShortLinkRow } from '../../store/short-links.ts';
import type { PrepareContext } from '../messaging/prepare.ts';

/**
 * A message's text with its long URLs replaced by short links, when its channel opted in and a base is configured
 * (else the text as it is); `rows` gives the links to store with the message once its id is known.
 */
export function shortenLinksOf(channel: Channel, text: string, ctx: PrepareContext): { text: string; rows: (messageId: string) => ShortLinkRow[] } {
  if (!channel.shortLinks || !ctx.shortLinks) return { text, rows: () => [] };
  const { base, ttlMs } = ctx.shortLinks;
  const shortened = shortenUrls(text, base);
  return {
    text: shortened.text,
    rows: (messageId) =>
      shortened.links.map((l) => ({
        code: l.code,
        url: l.url,
        message_id: messageId,
        organisation_id: channel.organisationId,
        channel_id: channel.id,
        created_at: ctx.now,
        expires_at: ctx.now + ttlMs,
      })),
  };
}
