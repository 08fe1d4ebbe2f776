import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type Static, Type } from 'typebox';
import { present } from '../../../domain/absent.ts';
import { OTP_ALPHABETS, OTP_CHANNELS, OTP_LIMITS, OTP_LOCALES, OTP_STATUSES, type OtpAlphabet, type OtpChannel, type OtpLocale } from '../../../domain/otp.ts';
import { underField } from '../../../core/errors.ts';
import type { Services } from '../../../core/services.ts';
import { authorize, baseUrl } from '../access.ts';
import { errorResponses, IdParams } from '../schemas.ts';
import { readableChannelIds } from '../messages.ts';

const Attempts = Type.Object({
  max: Type.Integer({ description: 'Checks allowed; the last wrong one cancels the code' }),
  used: Type.Integer({ description: 'Checks made' }),
});

const OtpView = Type.Object(
  {
    otpId: Type.String({ format: 'uuid' }),
    recipient: Type.Object({ to: Type.String() }),
    channel: Type.String({ enum: [...OTP_CHANNELS], description: 'How the latest code went: a text message, or a call that read it out' }),
    status: Type.String({ enum: [...OTP_STATUSES] }),
    detail: Type.Optional(
      Type.String({
        description:
          'Why it was cancelled: MAX_ATTEMPTS, CANCELLED_BY_USER, or the reason its message was refused (COUNTRY_NOT_ALLOWED, VELOCITY_LIMIT_EXCEEDED, INSUFFICIENT_CREDIT…)',
      }),
    ),
    createdAt: Type.String(),
    expiresAt: Type.String(),
    attempts: Attempts,
    messageId: Type.String({ description: 'The message that carried the latest code (shown with the code masked)' }),
    refClient: Type.Optional(Type.String()),
    href: Type.String(),
  },
  { $id: 'Otp', description: 'A one-time password; its code is never answered' },
);

const OtpCreate = Type.Object({
  recipient: Type.Object({ to: Type.String({ minLength: 1, maxLength: 32 }) }),
  channel: Type.Optional(
    Type.String({ enum: [...OTP_CHANNELS], description: 'SMS (default), or VOICE: a call on a VOICE channel of the organisation reads the code out' }),
  ),
  codeLength: Type.Optional(Type.Integer({ minimum: OTP_LIMITS.codeLength.min, maximum: OTP_LIMITS.codeLength.max, description: 'Default 6' })),
  alphabet: Type.Optional(
    Type.String({ enum: Object.keys(OTP_ALPHABETS), description: 'NUMERIC (default) or ALPHANUMERIC (digits and capitals, without 0, 1, I, L, O)' }),
  ),
  ttlSeconds: Type.Optional(Type.Integer({ minimum: OTP_LIMITS.ttlSeconds.min, maximum: OTP_LIMITS.ttlSeconds.max, description: 'Default 300' })),
  template: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: OTP_LIMITS.templateLength,
      description: 'The text, with {code} where the code goes; default "Your code is {code}" in the locale',
    }),
  ),
  locale: Type.Optional(Type.String({ enum: [...OTP_LOCALES], description: 'Language of the default template and of a call (default en-GB)' })),
  refClient: Type.Optional(Type.String({ maxLength: 140 })),
  maxAttempts: Type.Optional(Type.Integer({ minimum: OTP_LIMITS.maxAttempts.min, maximum: OTP_LIMITS.maxAttempts.max, description: 'Default 5' })),
  fallbackAfterSeconds: Type.Optional(
    Type.Integer({
      minimum: OTP_LIMITS.fallbackAfterSeconds.min,
      maximum: OTP_LIMITS.fallbackAfterSeconds.max,
      description: 'SMS only: when the text message is not delivered this long after it was sent, a call reads the code out',
    }),
  ),
});

const CheckBody = Type.Object({
  code: Type.String({ minLength: 1, maxLength: 64, description: 'As the person typed it (spaces, dashes and case do not matter)' }),
});
const CheckView = Type.Object({
  status: Type.String({ enum: [...OTP_STATUSES] }),
  detail: Type.Optional(Type.String()),
  attempts: Attempts,
});

/**
 * The verify API (Tern's own, beside smsmode's): send a one-time password to a number, check the code the person
 * typed, read or cancel it. The code is never answered; its message is billed and listed like any other, masked.
 */
export function otpRoutes(app: FastifyInstance, services: Services): void {
  const { otp } = services;
  const tags = ['OTP'];
  const security = [{ apiKey: [] }];
  app.addSchema(OtpView);
  const channelsOf = async (req: FastifyRequest, permission: 'messages:send' | 'messages:read') =>
    readableChannelIds(services, await authorize(services, req, permission, 'SMS'), 'SMS');

  app.post(
    '/sms/v1/otp',
    {
      schema: {
        tags,
        security,
        summary: 'Send a one-time password',
        description:
          'Sends a code to the number (a text message of the key’s channel, or a call) and answers 201 once its message is stored. ' +
          'A second request for a number with a code still pending sends it again (the same code), and is refused with 429 inside the ' +
          'cooldown or past the sends an hour allowed to a number. A message refused at accept (a fraud guard, no credit) ends the code ' +
          'CANCELLED with the reason in detail.',
        body: OtpCreate,
        response: { 201: Type.Ref('Otp'), ...errorResponses(400, 401, 403, 409, 429, 503) },
      },
    },
    async (req, reply) => {
      const principal = await authorize(services, req, 'messages:send', 'SMS');
      const b = req.body as Static<typeof OtpCreate>;
      const o = await underField('body.', () =>
        otp.request(principal.channel, {
          to: b.recipient.to,
          channel: b.channel as OtpChannel | undefined,
          codeLength: b.codeLength,
          alphabet: b.alphabet as OtpAlphabet | undefined,
          ttlSeconds: b.ttlSeconds,
          template: b.template,
          locale: b.locale as OtpLocale | undefined,
          refClient: b.refClient,
          maxAttempts: b.maxAttempts,
          fallbackAfterSeconds: b.fallbackAfterSeconds,
        }),
      );
      return reply.code(201).send(otp.view(o, baseUrl(services, req)));
    },
  );

  app.get(
    '/sms/v1/otp/:id',
    {
      schema: {
        tags,
        security,
        summary: 'Read a one-time password',
        params: IdParams,
        response: { 200: Type.Ref('Otp'), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const o = await otp.get((req.params as { id: string }).id, await channelsOf(req, 'messages:read'));
      return otp.view(o, baseUrl(services, req));
    },
  );

  app.post(
    '/sms/v1/otp/:id/check',
    {
      schema: {
        tags,
        security,
        summary: 'Check the code a person typed',
        description:
          'APPROVED when it is the code (once: a code approved already answers 409); PENDING after a wrong code with checks left; ' +
          'CANCELLED after the last allowed wrong code; EXPIRED past its time. Every check of a pending code counts.',
        params: IdParams,
        body: CheckBody,
        response: { 200: CheckView, ...errorResponses(400, 401, 403, 404, 409, 503) },
      },
    },
    async (req) => {
      const channelIds = await channelsOf(req, 'messages:send');
      const { code } = req.body as Static<typeof CheckBody>;
      const o = await underField('body.', () => otp.check((req.params as { id: string }).id, channelIds, code));
      const v = otp.view(o, baseUrl(services, req));
      return { status: v.status, ...present('detail', v.detail), attempts: v.attempts };
    },
  );

  app.delete(
    '/sms/v1/otp/:id',
    {
      schema: {
        tags,
        security,
        summary: 'Cancel a pending one-time password (its code no longer approves)',
        params: IdParams,
        response: { 200: Type.Ref('Otp'), ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (req) => {
      const o = await otp.cancel((req.params as { id: string }).id, await channelsOf(req, 'messages:send'));
      return otp.view(o, baseUrl(services, req));
    },
  );
}
