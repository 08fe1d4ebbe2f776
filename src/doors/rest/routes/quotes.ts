import type { FastifyInstance } from 'fastify';
import { type Static, Type } from 'typebox';
import { present } from '../../../domain/absent.ts';
import { toEuros } from '../../../domain/money.ts';
import type { RcsBody } from '../../../domain/rcs.ts';
import type { ChannelType } from '../../../domain/tenancy.ts';
import type { TextEncoding } from '../../../domain/text.ts';
import type { Quote } from '../../../core/quotes/service.ts';
import { fail, underField } from '../../../core/errors.ts';
import { MAX_CAMPAIGN_RECIPIENTS } from '../../../core/campaigns/service.ts';
import { quoteSmsCampaign } from '../../../core/quotes/campaign.ts';
import { requestRecipients } from './campaigns.ts';
import { TemplateUseBody } from './sms.ts';
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
        stop: Type.Boolean({ description: 'The opt-out mention is appended and counted (always on marketing to French numbers)' }),
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
  smsCampaignQuoteRoute(app, services);
  route('RCS', '/rcs/v1', 'RCS', RcsQuoteBody);
  route('VOICE', '/voice/v1', 'Voice', VoiceQuoteBody);
}

const SmsCampaignQuoteBody = Type.Object({
  recipients: Type.Optional(
    Type.Array(
      Type.Object({ to: Type.String({ maxLength: 32 }), values: Type.Optional(Type.Record(Type.String({ maxLength: 64 }), Type.String({ maxLength: 1000 }))) }),
      { minItems: 1, maxItems: MAX_CAMPAIGN_RECIPIENTS },
    ),
  ),
  csv: Type.Optional(Type.String({ minLength: 1 })),
  body: Type.Optional(
    Type.Object({
      text: Type.Optional(Type.String({ maxLength: 10_000 })),
      encoding: Type.Optional(Type.String({ enum: ['GSM7', 'UNICODE'] })),
      stop: Type.Optional(Type.Boolean()),
    }),
  ),
  template: Type.Optional(TemplateUseBody),
});

const CampaignQuoteView = Type.Object(
  {
    recipients: Type.Integer(),
    refused: Type.Integer({ description: 'Recipients whose number cannot be read (the campaign would list them in errors); left out of the ranges' }),
    messagePartCount: Type.Object({ min: Type.Integer(), max: Type.Integer() }),
    price: Type.Object({ min: Type.Number(), max: Type.Number(), total: Type.Number(), currency: Type.String() }),
  },
  { description: "What a campaign would be counted and charged: each recipient's text counted and priced on its own" },
);

/** Ours: `POST /sms/v1/campaigns/quote`, the range of parts and prices of a campaign (a template's texts differ per recipient). */
function smsCampaignQuoteRoute(app: FastifyInstance, services: Services): void {
  app.post(
    '/sms/v1/campaigns/quote',
    {
      bodyLimit: 8 * 1024 * 1024,
      schema: {
        tags: ['SMS'],
        security: [{ apiKey: [] }],
        summary: 'Count and price an SMS campaign without sending it: the range of its messages’ parts and prices',
        body: SmsCampaignQuoteBody,
        response: { 200: CampaignQuoteView, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const principal = await authorize(services, req, 'messages:send', 'SMS');
      const b = req.body as Static<typeof SmsCampaignQuoteBody>;
      const q = await underField('body.', async () =>
        quoteSmsCampaign(
          services.quotes,
          services.templates,
          principal.channel,
          {
            text: b.body?.text,
            ...(b.template && { template: b.template }),
            encoding: b.body?.encoding as TextEncoding | undefined,
            stop: b.body?.stop,
          },
          requestRecipients(b),
        ),
      );
      return {
        recipients: q.recipients,
        refused: q.refused,
        messagePartCount: q.parts,
        price: { min: toEuros(q.price.min), max: toEuros(q.price.max), total: toEuros(q.price.total), currency: 'EUR' },
      };
    },
  );
}
