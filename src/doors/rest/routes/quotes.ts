import type { FastifyInstance } from 'fastify';
import { type Static, Type } from 'typebox';
import { present } from '../../../core/domain/absent.ts';
import { toEuros } from '../../../core/domain/money.ts';
import type { RcsBody } from '../../../core/domain/rcs.ts';
import type { ChannelType } from '../../../core/domain/tenancy.ts';
import type { TextEncoding } from '../../../core/domain/text.ts';
import type { Quote } from '../../../core/quotes/service.ts';
import { fail } from '../../../core/errors.ts';
import type { Services } from '../../../core/services.ts';
import { authorize } from '../access.ts';
import { errorResponses } from '../schemas.ts';

const Recipient = Type.Optional(Type.Object({ to: Type.String({ maxLength: 32 }) }));

const SmsQuoteBody = Type.Object({
  recipient: Recipient,
  body: Type.Object({
    text: Type.String({ maxLength: 10_000 }),
    encoding: Type.Optional(Type.String({ enum: ['GSM7', 'UNICODE'] })),
    stop: Type.Optional(Type.Boolean()),
  }),
});

const RcsQuoteBody = Type.Object({
  recipient: Recipient,
  body: Type.Object(
    {
      type: Type.String({ enum: ['TEXT', 'CARD', 'CAROUSEL', 'FILE'] }),
      text: Type.Optional(Type.String({ maxLength: 10_000 })),
      suggestions: Type.Optional(Type.Array(Type.Object({}, { additionalProperties: true }), { maxItems: 100 })),
    },
    { additionalProperties: true },
  ),
});

const VoiceQuoteBody = Type.Object({ recipient: Recipient });

const QuoteView = Type.Object(
  {
    type: Type.String({ enum: ['SMS', 'RCS', 'VOICE'] }),
    recipient: Type.Optional(
      Type.Object({ to: Type.String(), country: Type.Optional(Type.String()), valid: Type.Boolean({ description: 'An invalid number is not charged' }) }),
    ),
    body: Type.Optional(
      Type.Object({
        encoding: Type.String({ enum: ['GSM7', 'UNICODE'] }),
        length: Type.Integer({ description: 'GSM 03.38 septets (an extension character counts two) or UCS-2 units' }),
        messagePartCount: Type.Integer(),
        unitsPerPart: Type.Integer({ description: '160/70 for one part, 153/67 for each part of a longer text' }),
        remainingInPart: Type.Integer({ description: 'Units left before one more part is needed' }),
        tooLong: Type.Boolean({ description: 'More than 10 parts: the send would be refused (400.004)' }),
      }),
    ),
    price: Type.Object({
      kind: Type.String(),
      units: Type.Optional(Type.Integer({ description: 'Absent for voice: a call is billed per started 30 s of its speech' })),
      unitAmount: Type.Number(),
      amount: Type.Optional(Type.Number({ description: 'What the send would be charged; absent for voice' })),
      currency: Type.String(),
    }),
  },
  { description: 'What a send would be counted and charged, from the same rules and price list as the send' },
);

function quoteView(q: Quote): Static<typeof QuoteView> {
  return {
    type: q.type,
    ...present('recipient', q.recipient),
    ...present('body', q.text),
    price: {
      kind: q.kind,
      ...present('units', q.units),
      unitAmount: toEuros(q.unitPrice),
      ...present('amount', q.price === undefined ? undefined : toEuros(q.price)),
      currency: 'EUR',
    },
  };
}

/** `POST /{sms,rcs,voice}/v1/messages/quote`: a send's parts and price, computed without sending. */
export function quoteRoutes(app: FastifyInstance, services: Services): void {
  const security = [{ apiKey: [] }];
  const route = (type: ChannelType, prefix: string, tag: string, body: typeof SmsQuoteBody | typeof RcsQuoteBody | typeof VoiceQuoteBody) =>
    app.post(
      `${prefix}/messages/quote`,
      {
        schema: {
          tags: [tag],
          security,
          summary: `Count and price a ${type === 'VOICE' ? 'voice message' : `${type} message`} without sending it`,
          body,
          response: { 200: QuoteView, ...errorResponses(400, 401, 403) },
        },
      },
      async (req) => {
        const principal = await authorize(services, req, 'messages:send', type);
        const b = req.body as { recipient?: { to: string }; body?: Record<string, unknown> };
        if (type === 'RCS' && b.body!.type === 'TEXT' && typeof b.body!.text !== 'string') fail('INVALID_REQUEST', 'body.body.text: is required');
        const quote = await services.quotes.quote(principal.channel, type, {
          ...(b.recipient && { to: b.recipient.to }),
          ...(type === 'SMS' && {
            text: b.body!.text as string,
            encoding: b.body!.encoding as TextEncoding | undefined,
            stop: b.body!.stop as boolean | undefined,
          }),
          ...(type === 'RCS' && { rcsBody: b.body as unknown as RcsBody }),
        });
        return quoteView(quote);
      },
    );
  route('SMS', '/sms/v1', 'SMS', SmsQuoteBody);
  route('RCS', '/rcs/v1', 'RCS', RcsQuoteBody);
  route('VOICE', '/voice/v1', 'Voice', VoiceQuoteBody);
}
