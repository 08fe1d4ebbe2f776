import type { FastifyInstance } from 'fastify';
import { type Static, Type } from 'typebox';
import { underField } from '../../../core/errors.ts';
import type { Services } from '../../../core/services.ts';
import { MAX_VOICE_TEXT_LENGTH, MAX_VOICE_TITLE_LENGTH } from '../../../core/voice/service.ts';
import { VOICE_LANGUAGES } from '../../../core/voice/tts.ts';
import { authorize } from '../access.ts';
import { errorResponses, IdParams, Nullable } from '../schemas.ts';
import { sendDateParam } from '../dates.ts';
import { readableChannelIds } from '../messages.ts';
import { channelMessageRoutes } from './channel-messages.ts';

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

/**
 * Text-to-speech voice messages: the same message object as SMS with `type: "VOICE"`, `body {text, title,
 * language}` and `duration` (seconds of audio: an answered call listened to in full lasts this long). Billed per
 * started 30 s from the VOICE price list.
 */
export function voiceRoutes(app: FastifyInstance, services: Services): void {
  const { voice } = services;
  const tags = ['Voice'];
  const security = [{ apiKey: [] }];

  channelMessageRoutes(app, services, {
    type: 'VOICE',
    prefix: '/voice/v1',
    tags,
    noun: { bare: 'voice message', one: 'a voice message' },
    listSummary: 'List voice messages (last 10 days by default)',
    send: {
      summary: 'Send a text-to-speech voice message',
      description:
        'The title then the text are rendered to speech (8 kHz mono WAV) before the answer, which is 201 with the ' +
        'message object once it is stored. 503 when text-to-speech is unavailable on this server. Supports the ' +
        'Idempotency-Key header.',
      body: SendVoiceBody,
      errors: [400, 401, 403, 413, 415, 503],
      idempotencyScope: 'voice',
      message: (req, principal, afterInsert) => {
        const body = req.body as Static<typeof SendVoiceBody>;
        return underField('body.', () =>
          voice.send(
            principal.channel,
            {
              to: body.recipient.to,
              text: body.body.text,
              title: body.body.title,
              language: body.body.language,
              from: body.from,
              refClient: body.refClient ?? body.ref_client,
              sentDate: sendDateParam(body.sentDate, 'body.sentDate'),
              callbackUrlStatus: body.callbackUrlStatus,
              source: 'REST',
            },
            afterInsert,
          ),
        );
      },
    },
  });

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
      return reply.type('audio/wav').header('content-length', audio.wav.length).header('x-audio-duration-ms', audio.durationMs).send(audio.wav);
    },
  );
}
