import type { FastifyInstance } from 'fastify';
import { type Static, Type } from 'typebox';
import type { Services } from '../../../core/services.ts';
import { fail } from '../../../core/errors.ts';
import { type BulkLookupItem, type LookupAnswer, MAX_BULK_LOOKUPS } from '../../../core/lookup/service.ts';
import { authorize } from '../access.ts';
import { errorPayload } from '../errors.ts';
import { omitNulls } from '../../../core/domain/absent.ts';
import { errorResponses } from '../schemas.ts';

const PHONE_TYPES = [
  'MOBILE',
  'FIXED_LINE',
  'VOIP',
  'TOLL_FREE',
  'PREMIUM_RATE',
  'SHARED_COST',
  'PERSONAL_NUMBER',
  'PAGER',
  'UAN',
  'VOICEMAIL',
  'UNKNOWN',
];

const lookupFields = {
  msisdn: Type.String({ description: 'The number in international digits, e.g. 33612345678' }),
  valid: Type.Boolean({ description: 'A number that exists in its country’s numbering plan (libphonenumber)' }),
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
  ported: Type.Optional(Type.Boolean({ description: 'Moved away from `network` (live query)' })),
  currentNetwork: Type.Optional(Type.String({ description: 'Operator serving the number today (live query)' })),
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
    currentNetwork: a.currentNetwork,
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
        response: { 200: LookupView, ...errorResponses(400, 401, 403, 409) },
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
        response: { 200: LookupView, ...errorResponses(400, 401, 403, 409) },
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
