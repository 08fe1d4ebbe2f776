import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type Static, Type } from 'typebox';
import type { Principal } from '../../../core/tenancy/auth.ts';
import type { Services } from '../../../core/services.ts';
import { CoreError, underField } from '../../../core/errors.ts';
import type { PreparedMessage } from '../../../core/messaging/accept.ts';
import type { MessageRow } from '../../../core/types.ts';
import { sendDateParam } from '../dates.ts';
import { sendText } from '../../../core/sms/templates.ts';
import { campaignRoutes } from './campaigns.ts';
import { channelMessageRoutes } from './channel-messages.ts';
import { Nullable } from '../schemas.ts';
import { MessageSchema } from '../messages.ts';

const OptionalString = (opts: Record<string, unknown> = {}) => Type.Optional(Nullable(Type.String(opts)));

export const SmsBody = Type.Object({
  text: Type.String({ minLength: 1 }),
  encoding: Type.Optional(Type.String({ enum: ['GSM7', 'UNICODE'] })),
  stop: Type.Optional(Type.Boolean()),
});

/** The body of a send: its text, unless a template gives it. */
const SmsSendBody = Type.Object({ ...SmsBody.properties, text: Type.Optional(SmsBody.properties.text) });

const TemplateValues = Type.Record(Type.String({ maxLength: 64 }), Type.String({ maxLength: 1000 }), {
  description: 'A value per variable; a variable without one takes its default',
});

export const TemplateUseBody = Type.Object(
  { id: Type.String({ minLength: 1, maxLength: 64 }), values: Type.Optional(TemplateValues) },
  { description: 'Ours: the text is this template of the channel filled with these values, instead of body.text (exactly one of the two)' },
);

export const SendSmsBody = Type.Object({
  recipient: Type.Object({ to: Type.String({ minLength: 1, maxLength: 32 }) }),
  body: Type.Optional(SmsSendBody),
  template: Type.Optional(TemplateUseBody),
  from: OptionalString({ maxLength: 64 }),
  refClient: OptionalString(),
  ref_client: OptionalString({ description: 'Alias of refClient' }),
  sentDate: OptionalString({ description: "ISO 8601; a future date schedules the message; without an offset it is read in the organisation's timeZone" }),
  callbackUrlStatus: OptionalString(),
  callbackUrlMo: OptionalString(),
  windowOverride: Type.Optional(
    Type.Boolean({ description: "Ours: send now even outside the organisation's marketing window (keys with the ADMIN role only); recorded on the message" }),
  ),
});

/** Sends the SMS a request's body describes on the key's channel; into a campaign, at its time by default, when given. */
export function sendSmsRequest(
  services: Services,
  req: FastifyRequest,
  principal: Principal,
  afterInsert?: PreparedMessage['afterInsert'],
  campaign?: { campaignId: string; defaultSendAt: number | null },
): Promise<MessageRow> {
  const body = req.body as Static<typeof SendSmsBody>;
  if (body.windowOverride && !principal.credential.roles.some((r) => r === 'ADMIN' || r === 'OWNER')) {
    return Promise.reject(new CoreError('FORBIDDEN_ROLE', 'windowOverride needs a key with the ADMIN or OWNER role', 'body.windowOverride'));
  }
  return underField('body.', async () =>
    services.sms.send(
      principal.channel,
      {
        to: body.recipient.to,
        text: await sendText(services.templates, principal.channel, body.body?.text, body.template),
        encoding: body.body?.encoding as 'GSM7' | 'UNICODE' | undefined,
        stop: body.body?.stop,
        from: body.from,
        refClient: body.refClient ?? body.ref_client,
        sentDate: sendDateParam(body.sentDate, 'body.sentDate') ?? (campaign?.defaultSendAt ? new Date(campaign.defaultSendAt) : null),
        callbackUrlStatus: body.callbackUrlStatus,
        callbackUrlMo: body.callbackUrlMo,
        source: campaign ? 'CAMPAIGN' : 'REST',
        campaignId: campaign?.campaignId,
        windowOverride: body.windowOverride === true,
      },
      afterInsert,
    ),
  );
}

export function smsRoutes(app: FastifyInstance, services: Services): void {
  const tags = ['SMS'];
  app.addSchema(MessageSchema);

  channelMessageRoutes(app, services, {
    type: 'SMS',
    prefix: '/sms/v1',
    tags,
    noun: { bare: 'message', one: 'a message' },
    listSummary: 'List messages (MT by default, last 10 days by default)',
    send: {
      summary: 'Send an SMS',
      description: 'Answers 201 with the message object once it is durably stored. Supports the Idempotency-Key header.',
      body: SendSmsBody,
      errors: [400, 401, 403, 409, 413, 415, 422],
      idempotencyScope: 'sms',
      onChannel: true,
      message: (req, principal, afterInsert) => sendSmsRequest(services, req, principal, afterInsert),
    },
  });

  campaignRoutes(app, services, {
    type: 'SMS',
    prefix: '/sms/v1',
    tags,
    messageFields: {
      body: Type.Optional(SmsSendBody),
      template: Type.Optional(TemplateUseBody),
      from: OptionalString({ maxLength: 64 }),
      sentDate: OptionalString({ description: "ISO 8601; a future date schedules the campaign; without an offset it is read in the organisation's timeZone" }),
      callbackUrlStatus: OptionalString(),
      callbackUrlMo: OptionalString(),
    },
    message: (fields) => {
      const b = fields as Static<typeof SendSmsBody>;
      return {
        text: b.body?.text,
        ...(b.template && { template: b.template }),
        encoding: b.body?.encoding as 'GSM7' | 'UNICODE' | undefined,
        stop: b.body?.stop,
        from: b.from,
        sentDate: sendDateParam(b.sentDate, 'body.sentDate'),
        callbackUrlStatus: b.callbackUrlStatus,
        callbackUrlMo: b.callbackUrlMo,
      };
    },
    body: SmsBody,
    sendBody: SendSmsBody,
    send: (req, principal, campaign, afterInsert) => sendSmsRequest(services, req, principal, afterInsert, campaign),
  });
}
