import type { FastifyInstance } from 'fastify';
import { type Static, Type } from 'typebox';
import type { Services } from '../../../core/services.ts';
import { type CoreError, fail } from '../../../core/errors.ts';
import type { LookupBatch } from '../../../core/lookup/batch.ts';
import { type BulkLookupItem, type LookupAnswer, MAX_BULK_LOOKUPS } from '../../../core/lookup/service.ts';
import { authorize } from '../access.ts';
import { errorPayload } from '../errors.ts';
import { omitNulls } from '../../../domain/absent.ts';
import { errorResponses } from '../schemas.ts';

const PHONE_TYPES = ['MOBILE', 'FIXED_LINE', 'VOIP', 'TOLL_FREE', 'PREMIUM_RATE', 'SHARED_COST', 'PERSONAL_NUMBER', 'PAGER', 'UAN', 'VOICEMAIL', 'UNKNOWN'];

function NetworkView(description: string) {
  return Type.Object(
    {
      mccMnc: Type.Optional(Type.String({ description: 'MCC and MNC, e.g. "20810"' })),
      name: Type.Optional(Type.String({ description: 'The operator’s name' })),
    },
    { description },
  );
}

const lookupFields = {
  msisdn: Type.String({ description: 'The number in international digits, e.g. 33612345678' }),
  valid: Type.Boolean({
    description: 'The network knows the number (live lookup); without a live answer, a number that exists in its country’s numbering plan (libphonenumber)',
  }),
  possible: Type.Boolean({ description: 'Has a possible length for its country' }),
  type: Type.Optional(Type.String({ enum: PHONE_TYPES, description: 'Absent when the digits could not be parsed' })),
  country: Type.Optional(Type.String({ description: 'English country name, e.g. "France"' })),
  isoCountryCode: Type.Optional(Type.String({ description: 'ISO 3166-1 alpha-2, e.g. "FR"' })),
  countryPrefix: Type.Optional(Type.String({ description: 'Country calling code, e.g. "33"' })),
  formats: Type.Optional(
    Type.Object({
      e164: Type.String({ description: '+33612345678' }),
      international: Type.String({ description: '+33 6 12 34 56 78' }),
      national: Type.String({ description: '06 12 34 56 78' }),
    }),
  ),
  network: Type.Optional(Type.String({ description: 'Operator the number range was allocated to (Google’s carrier data)' })),
  mcc: Type.Optional(Type.String()),
  mnc: Type.Optional(Type.String()),
  mccMnc: Type.Optional(Type.String({ description: 'MCC and MNC of `network`, e.g. "20810"' })),
  reachable: Type.Optional(Type.Boolean({ description: 'Attached to the network now (live query; mobile numbers only)' })),
  ported: Type.Optional(Type.Boolean({ description: 'Moved away from the network its range was allocated to (live query)' })),
  roaming: Type.Optional(Type.Boolean({ description: 'Roaming abroad now (live query)' })),
  currentNetwork: Type.Optional(NetworkView('The network serving the number today (live query)')),
  originalNetwork: Type.Optional(NetworkView('The network the number’s range was allocated to (live query)')),
  offline: Type.Optional(
    Type.Boolean({ description: 'true: the lookup provider could not be asked, and this is the number plan’s answer (nothing live in it)' }),
  ),
};

const LookupView = Type.Object(lookupFields, { description: 'One looked-up number; a field is absent wherever it is unknown' });

const BulkLookupItemView = Type.Union([
  Type.Object({ input: Type.String({ description: 'The number as sent' }), ...lookupFields }),
  Type.Object({
    input: Type.String({ description: 'The number as sent' }),
    error: Type.Object(
      { errorCode: Type.String(), message: Type.String(), detail: Type.String() },
      { description: 'Why this item was not looked up (not charged)' },
    ),
  }),
]);

const LookupQuery = Type.Object({
  msisdn: Type.Optional(Type.String({ description: 'The number: 33612345678, +33 6 12 34 56 78, 0033612345678' })),
  number: Type.Optional(Type.String({ description: 'Same as msisdn' })),
});

const LookupParams = Type.Object({ msisdn: Type.String({ minLength: 1 }) });

const BulkLookupBody = Type.Object(
  {
    msisdns: Type.Array(Type.String(), {
      minItems: 1,
      maxItems: MAX_BULK_LOOKUPS,
      description: `Up to ${MAX_BULK_LOOKUPS} numbers in any common form`,
    }),
  },
  { additionalProperties: false },
);

const LookupPostBody = Type.Object(
  {
    msisdn: Type.Optional(Type.String({ description: 'One number: answered at once, as GET /lookup' })),
    msisdns: Type.Optional(
      Type.Array(Type.String(), {
        maxItems: MAX_BULK_LOOKUPS,
        description: `A batch of up to ${MAX_BULK_LOOKUPS} numbers: accepted at once (202), the results POSTed to callbackUrl`,
      }),
    ),
    callbackUrl: Type.Optional(
      Type.String({ maxLength: 2048, description: 'Where the batch’s results are POSTed (default: the channel’s defaultCallbackUrlStatus)' }),
    ),
  },
  { additionalProperties: false },
);

const BatchAccepted = Type.Object({
  batchId: Type.String(),
  count: Type.Integer({ description: 'Numbers in the batch' }),
  callbackUrl: Type.String(),
  acceptedAt: Type.String(),
});

/** The webhook answering a batch lookup (declared to the core by the composition root). */
export function batchOutcomeView(batch: LookupBatch, outcome: { items: BulkLookupItem[] } | { error: CoreError }): Record<string, unknown> {
  const head = { batchId: batch.batchId, acceptedAt: new Date(batch.acceptedAt).toISOString(), count: batch.count };
  if ('error' in outcome) return { ...head, error: errorPayload(outcome.error.kind, outcome.error.detail) };
  return { ...head, items: outcome.items.map(bulkItemView) };
}

function lookupView(a: LookupAnswer): Static<typeof LookupView> {
  return omitNulls({
    msisdn: a.msisdn,
    valid: a.valid,
    possible: a.possible,
    type: a.type,
    country: a.country,
    isoCountryCode: a.isoCountryCode,
    countryPrefix: a.countryPrefix,
    formats: a.formats === null ? null : { ...a.formats },
    network: a.network,
    mcc: a.mcc,
    mnc: a.mnc,
    mccMnc: a.mccMnc,
    reachable: a.reachable,
    ported: a.ported,
    roaming: a.roaming,
    currentNetwork: a.currentNetwork === null ? null : { ...a.currentNetwork },
    originalNetwork: a.originalNetwork === null ? null : { ...a.originalNetwork },
    offline: a.offline ?? null,
  });
}

function bulkItemView(item: BulkLookupItem): Static<typeof BulkLookupItemView> {
  if ('error' in item) return { input: item.input, error: errorPayload(item.error.kind, item.error.detail) };
  return { input: item.input, ...lookupView(item.answer) };
}

export function lookupRoutes(app: FastifyInstance, services: Services): void {
  const tags = ['Lookup'];
  const security = [{ apiKey: [] }];
  const description =
    'Validity, type, country and formats (libphonenumber), the operator the range was allocated to and its MCC/MNC, ' +
    'and the live part from the operator network. Each lookup is charged (price list, channel type LOOKUP) to the ' +
    'organisation of the key’s channel; any channel’s key may look up. Input that is no phone number is refused ' +
    '(400.003) and not charged.';

  const lookupOne = async (req: Parameters<typeof authorize>[1], input: string) => {
    const principal = await authorize(services, req, 'numbers:lookup');
    return lookupView(await services.lookup.lookup(principal.channel, input));
  };

  app.get(
    '/commons/v1/lookup/:msisdn',
    {
      schema: {
        tags,
        security,
        summary: 'Look a number up',
        description,
        params: LookupParams,
        response: { 200: LookupView, ...errorResponses(400, 401, 403, 409, 503) },
      },
    },
    async (req) => lookupOne(req, (req.params as Static<typeof LookupParams>).msisdn),
  );

  app.get(
    '/lookup',
    {
      schema: {
        tags,
        security,
        summary: 'Look a number up (same answer as GET /commons/v1/lookup/{msisdn})',
        description,
        querystring: LookupQuery,
        response: { 200: LookupView, ...errorResponses(400, 401, 403, 409, 503) },
      },
    },
    async (req) => {
      const query = req.query as Static<typeof LookupQuery>;
      const input = query.msisdn ?? query.number;
      if (input === undefined) fail('INVALID_REQUEST', 'query.msisdn: is required (or query.number)');
      return lookupOne(req, input);
    },
  );

  app.post(
    '/lookup',
    {
      schema: {
        tags,
        security,
        summary: `Look one number up (msisdn), or up to ${MAX_BULK_LOOKUPS} by webhook (msisdns)`,
        description:
          '`{"msisdn": …}` answers the lookup at once, as GET /lookup. `{"msisdns": […], "callbackUrl": …}` is a batch ' +
          'for list cleaning: answered 202 with its `batchId`, then looked up in the background and its results POSTed ' +
          'to `callbackUrl` as one signed webhook, `{"event":"lookup.completed", batchId, items}` with the items of ' +
          'POST /commons/v1/lookup (or `lookup.failed` with an `error` when the balance did not cover them; nothing is ' +
          'charged then).',
        body: LookupPostBody,
        response: { 200: LookupView, 202: BatchAccepted, ...errorResponses(400, 401, 403, 409, 413, 415, 503) },
      },
    },
    async (req, reply) => {
      const body = req.body as Static<typeof LookupPostBody>;
      if ((body.msisdn === undefined) === (body.msisdns === undefined)) {
        fail('INVALID_REQUEST', 'send either msisdn (one number, answered at once) or msisdns (a batch, answered by webhook)');
      }
      if (body.msisdn !== undefined) {
        if (body.callbackUrl !== undefined) fail('INVALID_REQUEST', 'only for a batch (msisdns): one number is answered at once', 'callbackUrl');
        return lookupOne(req, body.msisdn);
      }
      const principal = await authorize(services, req, 'numbers:lookup');
      const batch = await services.lookupBatches.start(principal.channel, body.msisdns!, body.callbackUrl);
      return reply.code(202).send({
        batchId: batch.batchId,
        count: batch.count,
        callbackUrl: batch.callbackUrl,
        acceptedAt: new Date(batch.acceptedAt).toISOString(),
      });
    },
  );

  app.post(
    '/commons/v1/lookup',
    {
      schema: {
        tags,
        security,
        summary: `Look up to ${MAX_BULK_LOOKUPS} numbers up at once`,
        description:
          'Answers `items` in input order, each with the number as sent in `input`. An input that is no phone number ' +
          'has an `error` instead and is not charged; the others are charged together, all or none (409.002 when ' +
          'the balance does not cover them).',
        body: BulkLookupBody,
        response: {
          200: Type.Object({ items: Type.Array(BulkLookupItemView) }),
          ...errorResponses(400, 401, 403, 409, 413, 415),
        },
      },
    },
    async (req) => {
      const principal = await authorize(services, req, 'numbers:lookup');
      const { msisdns } = req.body as Static<typeof BulkLookupBody>;
      const items = await services.lookup.lookupMany(principal.channel, msisdns);
      return { items: items.map(bulkItemView) };
    },
  );
}
