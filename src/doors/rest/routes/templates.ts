import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type Static, Type } from 'typebox';
import { iso } from '../../../domain/dates.ts';
import { underField } from '../../../core/errors.ts';
import type { Services } from '../../../core/services.ts';
import { MAX_TEMPLATE_TEXT, type MessageTemplate } from '../../../core/sms/templates.ts';
import type { Principal } from '../../../core/tenancy/auth.ts';
import { assertOwnChannel, authorize } from '../access.ts';
import { errorResponses } from '../schemas.ts';

const Variables = Type.Array(Type.String({ maxLength: 64 }), {
  maxItems: 50,
  description: 'When given, the only variables the text may use (any other is refused)',
});

const TemplateCreate = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100, description: 'Unique on the channel' }),
    text: Type.String({
      minLength: 1,
      maxLength: MAX_TEMPLATE_TEXT,
      description: 'With {{variable}} placeholders; {{variable|default}} gives a default; \\{{ writes a literal {{',
    }),
    variables: Type.Optional(Variables),
  },
  { additionalProperties: false },
);

const TemplatePatch = Type.Object(
  {
    name: Type.Optional(TemplateCreate.properties.name),
    text: Type.Optional(TemplateCreate.properties.text),
    variables: Type.Optional(Variables),
  },
  { additionalProperties: false },
);

const TemplateView = Type.Object({
  templateId: Type.String(),
  channelId: Type.String(),
  name: Type.String(),
  text: Type.String(),
  variables: Type.Array(Type.String(), { description: 'The variables its text uses, in order of first use' }),
  creationDate: Type.String(),
  updateDate: Type.String(),
});

const ChannelParams = Type.Object({ channelId: Type.String({ maxLength: 64 }) });
const TemplateParams = Type.Object({ channelId: Type.String({ maxLength: 64 }), templateId: Type.String({ maxLength: 64 }) });

function view(t: MessageTemplate): Static<typeof TemplateView> {
  return {
    templateId: t.id,
    channelId: t.channelId,
    name: t.name,
    text: t.text,
    variables: t.variables,
    creationDate: iso(t.createdAt),
    updateDate: iso(t.updatedAt),
  };
}

/**
 * Ours: an SMS channel's named templates, under `/sms/v1/channels/{channelId}/templates` (only the key's own channel:
 * any other id is 403). A send or a campaign names one by id with `template: {id, values}` instead of `body.text`.
 */
export function templateRoutes(app: FastifyInstance, services: Services): void {
  const tags = ['SMS templates'];
  const security = [{ apiKey: [] }];
  const base = '/sms/v1/channels/:channelId/templates';
  const templates = services.templates;

  const enter = async (req: FastifyRequest, permission: 'messages:send' | 'messages:read'): Promise<Principal> => {
    const principal = await authorize(services, req, permission, 'SMS');
    assertOwnChannel(principal, (req.params as { channelId: string }).channelId);
    return principal;
  };
  const templateId = (req: FastifyRequest) => (req.params as { templateId: string }).templateId;

  app.post(
    base,
    {
      schema: {
        tags,
        security,
        summary: 'Create a template of the channel',
        params: ChannelParams,
        body: TemplateCreate,
        response: { 201: TemplateView, ...errorResponses(400, 401, 403, 409) },
      },
    },
    async (req, reply) => {
      const principal = await enter(req, 'messages:send');
      const created = await underField('body.', () => templates.create(principal.channel, req.body as Static<typeof TemplateCreate>));
      return reply.code(201).send(view(created));
    },
  );

  app.get(
    base,
    {
      schema: {
        tags,
        security,
        summary: "List the channel's templates by name",
        params: ChannelParams,
        response: { 200: Type.Object({ items: Type.Array(TemplateView) }), ...errorResponses(400, 401, 403) },
      },
    },
    async (req) => {
      const principal = await enter(req, 'messages:read');
      return { items: (await templates.list(principal.channel)).map(view) };
    },
  );

  app.get(
    `${base}/:templateId`,
    {
      schema: { tags, security, summary: 'Read a template', params: TemplateParams, response: { 200: TemplateView, ...errorResponses(400, 401, 403, 404) } },
    },
    async (req) => {
      const principal = await enter(req, 'messages:read');
      return view(await templates.get(principal.channel, templateId(req)));
    },
  );

  app.patch(
    `${base}/:templateId`,
    {
      schema: {
        tags,
        security,
        summary: 'Change a template: its name, text or declared variables; what is absent stays',
        description: 'Messages already sent keep their text; later sends and campaigns use the new one.',
        params: TemplateParams,
        body: TemplatePatch,
        response: { 200: TemplateView, ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (req) => {
      const principal = await enter(req, 'messages:send');
      return view(await underField('body.', () => templates.update(principal.channel, templateId(req), req.body as Static<typeof TemplatePatch>)));
    },
  );

  app.delete(
    `${base}/:templateId`,
    {
      schema: { tags, security, summary: 'Delete a template', params: TemplateParams, response: { 200: TemplateView, ...errorResponses(400, 401, 403, 404) } },
    },
    async (req) => {
      const principal = await enter(req, 'messages:send');
      return view(await templates.delete(principal.channel, templateId(req)));
    },
  );
}
