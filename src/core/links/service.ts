import { createHash } from 'node:crypto';
import { uuidv7 } from '../../domain/ids.ts';
import { isShortCode } from '../../domain/short-links.ts';
import { inTransaction, type Store } from '../../store/db.ts';
import { findMessage, insertEvents } from '../../store/messages.ts';
import { countClicksByChannel, findShortLink, insertShortLinkClick, listShortLinkClicks, listShortLinks } from '../../store/short-links.ts';
import { fail } from '../errors.ts';
import type { MessagingService } from '../messaging/service.ts';
import { writeEventWebhook } from '../webhooks/events.ts';

export interface LinkClick {
  url: string;
  messageId: string;
  at: number;
}

/** What a message's short links are, and who clicked them when (visitors only as counts). */
export interface MessageLinks {
  links: Array<{ code: string; url: string; expiresAt: number; clicks: number; lastClickAt: number | null }>;
}

/**
 * Short links followed: each click is recorded with a `CLICK` event on its message's timeline and a `CLICKED`
 * webhook to the message's status URL, in one transaction, so the webhook goes if and only if the click is kept.
 */
export class ShortLinkService {
  constructor(
    private readonly store: Store,
    private readonly messaging: MessagingService,
  ) {}

  /** The URL a code stands for, the click recorded; an unknown or expired code is NOT_FOUND. */
  follow(code: string, visitor: string, now = Date.now()): Promise<LinkClick> {
    if (!isShortCode(code)) fail('NOT_FOUND', 'no such link');
    return inTransaction(this.store, async (db) => {
      const link = await findShortLink(db, code);
      if (!link || link.expires_at <= now) fail('NOT_FOUND', 'no such link, or it has expired');
      await insertShortLinkClick(db, {
        id: uuidv7(now),
        code,
        message_id: link.message_id,
        channel_id: link.channel_id,
        visitor_hash: createHash('sha256').update(`${code}\0${visitor}`).digest('base64url'),
        clicked_at: now,
      });
      const message = await findMessage(db, link.message_id);
      // Retention removes a message's links with it; read it anyway rather than trust that.
      if (message) {
        await insertEvents(db, [
          {
            id: uuidv7(now),
            message_id: message.id,
            organisation_id: message.organisation_id,
            channel_id: message.channel_id,
            kind: 'CLICK',
            status: message.status,
            detail: null,
            at: now,
          },
        ]);
        const channel = await this.messaging.channel(message.channel_id, db);
        const url = message.callback_url_status ?? channel.defaultCallbackUrlStatus;
        if (url) {
          await writeEventWebhook(this.store, db, {
            kind: 'CLICK',
            event: 'CLICKED',
            messageId: message.id,
            organisationId: message.organisation_id,
            channelId: message.channel_id,
            url,
            at: now,
            body: { messageId: message.id, ...(message.ref_client !== null && { refClient: message.ref_client }), url: link.url, code },
          });
        }
      }
      return { url: link.url, messageId: link.message_id, at: now };
    });
  }

  /** A message's links with their clicks. */
  async ofMessage(messageId: string): Promise<MessageLinks> {
    const db = this.store.db;
    const links = await listShortLinks(db, messageId);
    const clicks = await listShortLinkClicks(db, messageId);
    return {
      links: links.map((l) => {
        const mine = clicks.filter((c) => c.code === l.code);
        return { code: l.code, url: l.url, expiresAt: l.expires_at, clicks: mine.length, lastClickAt: mine.at(-1)?.clicked_at ?? null };
      }),
    };
  }

  /** Clicks per channel in [from, to). */
  clicksByChannel(channelIds: string[], from: number, to: number): Promise<Map<string, number>> {
    return countClicksByChannel(this.store.db, channelIds, from, to);
  }
}
