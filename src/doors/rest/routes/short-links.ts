import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { iso } from '../../../domain/dates.ts';
import { CoreError } from '../../../core/errors.ts';
import type { Services } from '../../../core/services.ts';
import { authorize } from '../access.ts';
import { readableChannelIds } from '../messages.ts';
import { errorResponses, IdParams } from '../schemas.ts';

const MessageLinks = Type.Object({
  items: Type.Array(
    Type.Object({
      code: Type.String({ description: 'The short link is the base (TERN_SHORT_LINK_BASE) followed by it' }),
      url: Type.String({ description: 'Where it redirects' }),
      expirationDate: Type.String(),
      clicks: Type.Integer(),
      lastClickDate: Type.Optional(Type.String()),
    }),
  ),
});

const GONE_PAGE = 'This link does not exist or has expired.\n';

/**
 * `GET /l/{code}`: a short link of a message, followed. Anyone may follow one (the code is the secret): the answer is a
 * 302 to the URL it stands for, or a plain 404 page for an unknown or expired code.
 */
export function shortLinkRoutes(app: FastifyInstance, services: Services): void {
  app.get(
    '/sms/v1/messages/:id/links',
    {
      schema: {
        tags: ['SMS'],
        security: [{ apiKey: [] }],
        summary: "An SMS's short links and how often each was clicked (channels with shortLinks)",
        params: IdParams,
        response: { 200: MessageLinks, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const principal = await authorize(services, req, 'messages:read', 'SMS');
      const { id } = req.params as { id: string };
      // Read through the message first: 404 for a message the key does not see.
      await services.messaging.get(id, await readableChannelIds(services, principal), 'SMS');
      const { links } = await services.shortLinks.ofMessage(id);
      return {
        items: links.map((l) => ({
          code: l.code,
          url: l.url,
          expirationDate: iso(l.expiresAt),
          clicks: l.clicks,
          ...(l.lastClickAt !== null && { lastClickDate: iso(l.lastClickAt) }),
        })),
      };
    },
  );

  app.get(
    '/l/:code',
    {
      schema: {
        // Followed by recipients' phones, not called by clients: documented in docs/marketing.md, not in the API.
        hide: true,
        tags: ['Short links'],
        summary: "Follow a message's short link: records the click (its message's CLICK event and CLICKED webhook) and redirects",
        params: Type.Object({ code: Type.String() }),
      },
    },
    async (req, reply) => {
      const { code } = req.params as { code: string };
      try {
        const click = await services.shortLinks.follow(code, req.ip);
        return reply.code(302).header('location', click.url).header('cache-control', 'no-store').header('referrer-policy', 'no-referrer').send();
      } catch (err) {
        if (err instanceof CoreError && err.kind === 'NOT_FOUND') {
          return reply.code(404).type('text/plain; charset=utf-8').header('cache-control', 'no-store').send(GONE_PAGE);
        }
        throw err;
      }
    },
  );
}
