import type { FastifyInstance } from 'fastify';
import { type Static, Type } from 'typebox';
import { underField } from '../../../core/errors.ts';
import type { Services } from '../../../core/services.ts';
import { MAX_VOICE_TEXT_LENGTH, MAX_VOICE_TITLE_LENGTH } from '../../../core/voice/service.ts';
import { VOICE_LANGUAGES } from '../../../core/voice/tts.ts';
import { authorize } from '../access.ts';
import { errorResponses, IdParams, Nullable } from '../schemas.ts';
import { sendDateParam } from '../dates.ts';
import { EventList, eventList, ListQuery, listMessagesFor, MessageList, readableChannelIds, renderMessage } from '../messages.ts';

const OptionalString = (opts: Record<string, unknown> = {}) => Type.Optional(Nullable(Type.String(opts)));

const SendVoiceBody = Type.Object({
  recipient: Type.Object({ to: Type.String({ minLength: 1, maxLength: 32 }) }),
  body: Type.Object({
    text: Type.String({ minLength: 1, maxLength: MAX_VOICE_TEXT_LENGTH, description: 'Spoken after the title' }),
    title: OptionalString({ maxLength: MAX_VOICE_TITLE_LENGTH, description: 'Spoken first; a default title in the language otherwise' }),
    language: Type.Optional(Type.String({ enum: [...VOICE_LANGUAGES], default: 'fr-FR' })),
  }),
  from: OptionalString({ maxLength: 64 }),
  refClient: OptionalString(),
  ref_client: OptionalString({ description: 'Alias of refClient' }),
  sentDate: OptionalString({ description: "ISO 8601; a future date schedules the call; without an offset it is read in the organisation's timeZone" }),
  callbackUrlStatus: OptionalString(),
});

type ListQueryT = Static<typeof ListQuery>;

/**
 * Text-to-speech voice messages: the same message object as SMS with `type: "VOICE"`, `body {text, title,
 * language}` and `duration` (seconds of audio: an answered call listened to in full lasts this long). Billed per
 * started 30 s from the VOICE price list.
 */
export function voiceRoutes(app: FastifyInstance, services: Services): void {
  const { messaging, voice } = services;
  const tags = ['Voice'];
  const security = [{ apiKey: [] }];

  app.post(
    '/voice/v1/messages',
    {
      schema: {
        tags,
        security,
        summary: 'Send a text-to-speech voice message',
        description:
          'The title then the text are rendered to speech (8 kHz mono WAV) before the answer, which is 201 with the ' +
          'message object once it is stored. 503 when text-to-speech is unavailable on this server.',
        body: SendVoiceBody,
        response: { 201: Type.Ref('Message'), ...errorResponses(400, 401, 403, 413, 415, 503) },
      },
    },
    async (req, reply) => {
      const principal = await authorize(services, req, 'messages:send', 'VOICE');
      const body = req.body as Static<typeof SendVoiceBody>;
      const m = await underField('body.', () => voice.send(principal.channel, {
        to: body.recipient.to,
        text: body.body.text,
        title: body.body.title,
        language: body.body.language,
        from: body.from,
        refClient: body.refClient ?? body.ref_client,
        sentDate: sendDateParam(body.sentDate, 'body.sentDate'),
        callbackUrlStatus: body.callbackUrlStatus,
        source: 'REST',
      }));
      return reply.code(201).send(await renderMessage(services, req, m));
    },
  );

  app.get(
    '/voice/v1/messages',
    {
      schema: {
        tags,
        security,
        summary: 'List voice messages (last 10 days by default)',
        querystring: ListQuery,
        response: { 200: MessageList, ...errorResponses(400, 401, 403) },
      },
    },
    async (req) => {
      const principal = await authorize(services, req, 'messages:read', 'VOICE');
      return listMessagesFor(services, req, principal, 'VOICE', req.query as ListQueryT);
    },
  );

  app.get(
    '/voice/v1/messages/:id',
    {
      schema: { tags, security, summary: 'Read a voice message', params: IdParams, response: { 200: Type.Ref('Message'), ...errorResponses(400, 401, 403, 404) } },
    },
    async (req) => {
      const principal = await authorize(services, req, 'messages:read', 'VOICE');
      const m = await messaging.get((req.params as { id: string }).id, await readableChannelIds(services, principal), 'VOICE');
      return renderMessage(services, req, m);
    },
  );

  app.get(
    '/voice/v1/messages/:id/audio',
    {
      schema: {
        tags,
        security,
        summary: 'The audio of a voice message (WAV, 8 kHz mono 16-bit PCM)',
        params: IdParams,
        response: {
          200: { description: 'audio/wav', content: { 'audio/wav': { schema: { type: 'string', format: 'binary' } } } },
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (req, reply) => {
      const principal = await authorize(services, req, 'messages:read', 'VOICE');
      const { audio } = await voice.audio((req.params as { id: string }).id, await readableChannelIds(services, principal));
      return reply
        .type('audio/wav')
        .header('content-length', audio.wav.length)
        .header('x-audio-duration-ms', audio.durationMs)
        .send(audio.wav);
    },
  );

  app.get(
    '/voice/v1/messages/:id/events',
    {
      schema: { tags, security, summary: 'Status history of a voice message', params: IdParams, response: { 200: EventList, ...errorResponses(400, 401, 403, 404) } },
    },
    async (req) => {
      const principal = await authorize(services, req, 'messages:read', 'VOICE');
      return eventList(await messaging.events((req.params as { id: string }).id, await readableChannelIds(services, principal), 'VOICE'));
    },
  );

  app.delete(
    '/voice/v1/messages/:id',
    {
      schema: {
        tags,
        security,
        summary: 'Cancel a scheduled voice message (refunded)',
        params: IdParams,
        response: { 200: Type.Ref('Message'), ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (req) => {
      const principal = await authorize(services, req, 'messages:send', 'VOICE');
      const m = await messaging.cancel((req.params as { id: string }).id, await readableChannelIds(services, principal), 'VOICE');
      return renderMessage(services, req, m);
    },
  );
}
