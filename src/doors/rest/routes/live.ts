import type { FastifyInstance } from 'fastify';
import { type Static, Type } from 'typebox';
import { present } from '../../../domain/absent.ts';
import { isUuid } from '../../../domain/ids.ts';
import { fail } from '../../../core/errors.ts';
import type { FeedItem } from '../../../core/feed/message-feed.ts';
import type { Services } from '../../../core/services.ts';
import { authorize } from '../access.ts';
import { errorResponses } from '../schemas.ts';
import { reachableChannel } from './commons.ts';
import { readableChannelIds, renderMessage } from '../messages.ts';

const EventsQuery = Type.Object({
  'searchBy[channel.type]': Type.Optional(Type.String({ enum: ['SMS', 'RCS', 'VOICE'] })),
  'searchBy[channel.channelId]': Type.Optional(Type.String({ format: 'uuid' })),
});

/** Streams a credential may hold open at once on one node. */
const MAX_STREAMS_PER_KEY = 20;
/** A comment line this often keeps proxies from closing a quiet stream. */
const KEEP_ALIVE_MS = 15_000;
/** Events a reconnecting client is given back at most (from its Last-Event-ID). */
const REPLAY_LIMIT = 1_000;

const EVENT_DESCRIPTION = [
  'A `text/event-stream` (Server-Sent Events) of the message events of the channels the key reads — its own channel,',
  'or every channel of its organisation for MANAGER and ADMIN keys — as they are committed: each accept, status change',
  'and inbound message is one `message` event whose `id` is the event id and whose `data` is',
  '`{"eventId", "kind", "status", "detail"?, "date", "message": <the message object>}`. The first event, `ready`,',
  'lists the channels followed. A client that reconnects with `Last-Event-ID` first gets the events it missed (up to',
  `${REPLAY_LIMIT}). A comment line comes every ${KEEP_ALIVE_MS / 1000} s. At most ${MAX_STREAMS_PER_KEY} streams per key at once (429.001 past that).`,
].join(' ');

/** Server-Sent Events of message changes, for the console and `tern messages tail`. */
export function liveRoutes(app: FastifyInstance, services: Services): void {
  const open = new Set<() => void>();
  const perKey = new Map<string, number>();

  // Streams never end on their own: a stopping server ends them so that it can close.
  app.addHook('preClose', async () => {
    for (const end of [...open]) end();
  });

  app.get(
    '/commons/v1/events',
    {
      schema: {
        tags: ['Commons'],
        security: [{ apiKey: [] }],
        summary: 'Follow message events live (Server-Sent Events)',
        description: EVENT_DESCRIPTION,
        querystring: EventsQuery,
        headers: Type.Object({ 'last-event-id': Type.Optional(Type.String({ description: 'The last event id received' })) }),
        response: {
          200: { description: 'An event stream', content: { 'text/event-stream': { schema: Type.String() } } },
          ...errorResponses(400, 401, 403, 404, 429),
        },
      },
    },
    async (req, reply) => {
      const principal = await authorize(services, req, 'messages:read');
      const q = req.query as Static<typeof EventsQuery>;
      let channelIds = await readableChannelIds(services, principal, q['searchBy[channel.type]']);
      const only = q['searchBy[channel.channelId]'];
      if (only !== undefined) {
        const channel = await reachableChannel(services, principal, only);
        channelIds = channelIds.filter((id) => id === channel.id);
      }
      const lastEventId = req.headers['last-event-id'];
      if (lastEventId !== undefined && (typeof lastEventId !== 'string' || !isUuid(lastEventId))) {
        fail('INVALID_REQUEST', 'header.last-event-id: must be an event id received on this stream');
      }
      const keyId = principal.credential.id;
      if ((perKey.get(keyId) ?? 0) >= MAX_STREAMS_PER_KEY) {
        fail('RATE_LIMITED', `at most ${MAX_STREAMS_PER_KEY} event streams per key at once`);
      }
      const backlog = lastEventId ? await services.feed.since(channelIds, lastEventId, REPLAY_LIMIT) : [];

      reply.hijack();
      const res = reply.raw;
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      });
      perKey.set(keyId, (perKey.get(keyId) ?? 0) + 1);
      const release = () => {
        const n = (perKey.get(keyId) ?? 1) - 1;
        if (n <= 0) perKey.delete(keyId);
        else perKey.set(keyId, n);
      };

      let ended = false;
      const write = (chunk: string) => {
        if (!ended) res.write(chunk);
      };
      const send = async (items: FeedItem[]) => {
        for (const { event, message } of items) {
          const data = {
            eventId: event.id,
            kind: event.kind,
            status: event.status,
            ...present('detail', event.detail),
            date: new Date(Number(event.at)).toISOString(),
            message: await renderMessage(services, req, message),
          };
          write(`id: ${event.id}\nevent: message\ndata: ${JSON.stringify(data)}\n\n`);
        }
      };
      // Events are written in the order they came, one batch after the other.
      let queue = Promise.resolve();
      const enqueue = (items: FeedItem[]) => {
        queue = queue.then(() => send(items)).catch(() => end());
      };

      // Ready once listening: what the client reads after this event is older than any event the stream sends.
      let unsubscribe: () => void;
      try {
        unsubscribe = await services.feed.subscribe(channelIds, enqueue);
      } catch (err) {
        // Tern is stopping: the stream ends before it began (the client reconnects elsewhere).
        req.log.debug({ err }, 'event stream not opened');
        release();
        res.end();
        return;
      }
      write(`retry: 3000\nevent: ready\ndata: ${JSON.stringify({ channels: channelIds })}\n\n`);
      enqueue(backlog);
      const keepAlive = setInterval(() => write(': keep-alive\n\n'), KEEP_ALIVE_MS);

      function end(): void {
        if (ended) return;
        ended = true;
        open.delete(end);
        clearInterval(keepAlive);
        unsubscribe();
        release();
        res.end();
      }
      open.add(end);
      req.raw.on('close', end);
      res.on('close', end);
      if (req.raw.destroyed || res.destroyed) end();
    },
  );
}
