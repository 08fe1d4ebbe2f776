/**
 * What the OpenAPI document says beyond the route schemas, so that a generator turns it into a good client:
 * - an `operationId` on every operation, `verbNoun` from its method and path (stable while the path is), unique;
 * - the error answers every operation can give: 400 (a parameter or body), 401 and 403 (a key), 404 (an id in the
 *   path), 409 (an Idempotency-Key still in progress), 429 and 503 with `Retry-After`, besides those the route declares
 *   (a test calls every operation and checks that what it answers is documented);
 * - the `Idempotency-Key` header on the sends that honour it, `X-Request-Id` on every request (optional: Tern keeps a
 *   sane one) and every answer, the `RateLimit-*` headers on every authenticated answer;
 * - `SentMessage`, the message object of a send's answer, where `status` is always set (only received messages have
 *   none);
 * - examples on every operation: hand-written ones on the most used (openapi-examples.ts), made from the schemas and
 *   shared sample values on the others (openapi-samples.ts);
 * - the objects whose shape depends on their `type` (RCS bodies, suggestions) as a `oneOf` with a discriminator, and a
 *   carousel card's two forms as an `anyOf`: the validator reads them as if/then (an error then names the field wrong
 *   in the variant the `type` names), which generators cannot turn into a union — the same values, in their form.
 * It only adds to what the routes declare: an operation's own `operationId`, answers and headers win.
 */
import { EXAMPLES, LEGACY_ANSWERS, MESSAGE_EXAMPLES, type OperationExample } from './openapi-examples.ts';
import { Sampler } from './openapi-samples.ts';
import { errorPayload, type ErrorPayload } from './errors.ts';

type Json = Record<string, any>;

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/** The last word of a path that is an action on what precedes it (`POST /admin/v1/routes/test`), as the verb. */
const ACTIONS = new Set([
  'test',
  'replay',
  'cancel',
  'credit',
  'revoke',
  'rotate',
  'verify',
  'check',
  'retry',
  'pause',
  'resume',
  'block',
  'unblock',
  'approve',
  'reject',
  'archive',
  'restore',
  'quote',
  'send',
  'close',
  'reset',
  'preview',
  'render',
  'import',
  'export',
  'validate',
  'resend',
]);

/** Words that end in s but name one thing (a GET of them is `get…`, not `list…`). */
const SINGLE_THINGS = new Set(['metrics', 'status']);

const pascal = (word: string) =>
  word
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('');

/** A plural noun as one: `messages` → `message`, `categories` → `category`, `addresses` → `address`. */
export function singular(word: string): string {
  if (word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  if (/(ss|sh|ch|x)es$/.test(word)) return word.slice(0, -2);
  if (/[^su]s$/.test(word)) return word.slice(0, -1);
  return word;
}

/**
 * The operationId of an operation: a verb (`list` a collection, `get` one, `create`, `set` by PUT, `update`, `delete`,
 * or the action a path ends with) and the path's words in PascalCase, a word singular when an id follows it or when one
 * thing is made. `GET /sms/v1/messages` is `listSmsMessages`, `GET /sms/v1/messages/{id}` `getSmsMessage`, `POST
 * /sms/v1/campaigns/{id}/messages` `createSmsCampaignMessage`, `GET /http/1.6/sendSMS.do` `legacySendSms` (`…ByForm`
 * by POST).
 */
export function operationIdOf(method: string, path: string): string {
  const legacy = /^\/http\/[\d.]+\/([A-Za-z]+)\.do$/.exec(path);
  if (legacy) {
    // sendSMSBatch: send, SMS, Batch, each word capitalised.
    const words = legacy[1]!.match(/[A-Z]+(?![a-z])|[A-Z]?[a-z]+/g) ?? [];
    return `legacy${words.map((w) => w[0]!.toUpperCase() + w.slice(1).toLowerCase()).join('')}${method === 'post' ? 'ByForm' : ''}`;
  }
  const segments = path.split('/').filter((s) => s !== '' && !/^v\d+(\.\d+)?$/.test(s));
  const words: string[] = [];
  let endsWithId = false;
  for (const [i, s] of segments.entries()) {
    if (s.startsWith('{')) {
      if (words.length > 0) words[words.length - 1] = singular(words[words.length - 1]!);
      endsWithId = i === segments.length - 1;
      continue;
    }
    words.push(s);
    endsWithId = false;
  }
  let verb: string;
  const last = words[words.length - 1] ?? '';
  if (method === 'post' && ACTIONS.has(last) && words.length > 1) {
    verb = last;
    words.pop();
  } else if (method === 'get') verb = endsWithId || !last.endsWith('s') || SINGLE_THINGS.has(last) ? 'get' : 'list';
  else if (method === 'post') {
    verb = 'create';
    if (!endsWithId && words.length > 0) words[words.length - 1] = singular(last);
  } else if (method === 'put') verb = 'set';
  else if (method === 'patch') verb = 'update';
  else verb = 'delete';
  return verb + words.map(pascal).join('');
}

const HEADERS: Json = {
  'X-Request-Id': { description: 'The id of the request, in every answer and in the logs: quote it when asking about a request', schema: { type: 'string' } },
  'RateLimit-Limit': { description: 'Requests a second this key may make in this route group', schema: { type: 'integer' } },
  'RateLimit-Remaining': { description: 'Requests left in the current second', schema: { type: 'integer' } },
  'RateLimit-Reset': { description: 'Seconds until the quota is whole again', schema: { type: 'integer' } },
  'Retry-After': { description: 'Seconds to wait before trying again', schema: { type: 'integer', minimum: 1 } },
  'Idempotent-Replayed': {
    description: '`true` when this is the answer kept for the Idempotency-Key, not a new send',
    schema: { type: 'string', enum: ['true'] },
  },
};

const IDEMPOTENCY_KEY: Json = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Makes a retried request safe: the first answer for the key is kept 24 hours and answered again to a request with the same key and body; the same key with another body is 422, and while the first is in progress 409',
  schema: { type: 'string', minLength: 1, maxLength: 255 },
  example: 'order-42-send',
};

/** The request's own id, which Tern keeps (in its answer and logs) when it is sane; it makes one otherwise. */
const REQUEST_ID: Json = {
  name: 'X-Request-Id',
  in: 'header',
  required: false,
  description: 'An id for this request (1 to 128 letters, digits or ._:@/+=-), answered back and written in the logs; Tern makes one otherwise',
  schema: { type: 'string', pattern: '^[A-Za-z0-9._:@/+=-]{1,128}$' },
  example: 'req-7f3a91c2',
};

const ERRORS: Record<string, string> = {
  '400': 'Invalid request: a parameter or the body, named in `detail`',
  '401': 'No X-Api-Key, or one Tern does not know',
  '403': 'The key may not do this (its role, its channel type, another organisation)',
  '404': 'Not found (or not visible to this key)',
  '409': 'Conflict: the state does not allow it, or a request with the same Idempotency-Key is in progress',
  '429': 'Too many requests: wait as Retry-After says',
  '503': 'Unavailable for a moment (the database): wait as Retry-After says',
};

/** An example of each error answer, as Tern writes it. */
const ERROR_EXAMPLES: Record<string, ErrorPayload> = {
  '400': errorPayload('INVALID_REQUEST', 'body.recipient.to: is required'),
  '401': errorPayload('MISSING_API_KEY', 'send the API key in the X-Api-Key header'),
  '403': errorPayload('FORBIDDEN_ROLE', 'roles VIEWER may not perform messages:send'),
  '404': errorPayload('NOT_FOUND', 'message 01a251dd-0001-7000-8000-000000000001 not found'),
  '409': errorPayload('IDEMPOTENCY_IN_PROGRESS', 'a request with Idempotency-Key "order-42-send" is still being processed; retry later'),
  '413': errorPayload('PAYLOAD_TOO_LARGE', 'the request body is larger than this route accepts'),
  '415': errorPayload('UNSUPPORTED_MEDIA_TYPE', 'content type "text/plain" is not supported; send application/json'),
  '422': errorPayload('IDEMPOTENCY_MISMATCH', 'Idempotency-Key "order-42-send" was already used with a different request'),
  '429': errorPayload('RATE_LIMITED', 'more than 50 send requests a second with this key'),
  '503': errorPayload('STORAGE_UNAVAILABLE', 'the database is unavailable: nothing was done; try again shortly'),
};

const ref = (name: string) => ({ $ref: `#/components/headers/${name}` });

/** The error answer of a REST operation (the `Error` schema) or of a legacy one (a text line). */
function errorAnswer(status: string, legacy: boolean): Json {
  const content = legacy ? { 'text/plain': { schema: { type: 'string' } } } : { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } };
  return { description: ERRORS[status], content };
}

function addHeaders(response: Json, names: string[]): void {
  response.headers ??= {};
  for (const n of names) response.headers[n] ??= ref(n);
}

/** The document with what the module comment lists added. */
export function enrichOpenApi(doc: Json): Json {
  doc.components ??= {};
  doc.components.headers = { ...HEADERS, ...doc.components.headers };
  doc.components.parameters = { 'X-Request-Id': REQUEST_ID, ...doc.components.parameters };
  addSentMessage(doc);
  const sampler = new Sampler(doc);
  const taken = new Map<string, string>();
  for (const [path, item] of Object.entries(doc.paths ?? {}) as Array<[string, Json]>) {
    const legacy = path.startsWith('/http/');
    for (const method of METHODS) {
      const op = item[method] as Json | undefined;
      if (!op) continue;
      const where = `${method.toUpperCase()} ${path}`;
      op.operationId ??= operationIdOf(method, path);
      const other = taken.get(op.operationId);
      if (other) throw new Error(`OpenAPI: ${where} and ${other} have the same operationId ${op.operationId}`);
      taken.set(op.operationId, where);

      const authenticated = (Array.isArray(op.security) && op.security.length > 0) || (legacy && !path.endsWith('/healthz'));
      const hasInput = Boolean(op.requestBody) || (op.parameters ?? []).some((p: Json) => p.in === 'query' || p.in === 'path');
      // The sends that honour the header say so, or declare it.
      const idempotent =
        method === 'post' &&
        (/Idempotency-Key/.test(`${op.description ?? ''} ${op.summary ?? ''}`) ||
          (op.parameters ?? []).some((p: Json) => p.in === 'header' && String(p.name).toLowerCase() === 'idempotency-key'));
      const statuses = [
        ...(hasInput ? ['400'] : []),
        ...(authenticated ? ['401', '403', '429'] : []),
        // An id in the path may name nothing (a number in the path is looked up, not found: the route says when it can 404).
        ...(/\{[A-Za-z]*[iI]d\}/.test(path) ? ['404'] : []),
        ...(idempotent ? ['409'] : []),
        ...(authenticated || path.startsWith('/readyz') ? ['503'] : []),
      ];
      op.responses ??= {};
      for (const s of statuses) op.responses[s] ??= errorAnswer(s, legacy);
      for (const [status, response] of Object.entries(op.responses) as Array<[string, Json]>) {
        if (response.$ref) continue;
        const error = response.content?.['application/json'];
        if (error?.schema?.$ref === '#/components/schemas/Error' && ERROR_EXAMPLES[status]) error.example ??= ERROR_EXAMPLES[status];
        addHeaders(response, ['X-Request-Id']);
        if (authenticated) addHeaders(response, ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']);
        if (status === '429' || status === '503') addHeaders(response, ['Retry-After']);
        if (idempotent && status.startsWith('2')) addHeaders(response, ['Idempotent-Replayed']);
      }
      op.parameters ??= [];
      op.parameters.push({ $ref: '#/components/parameters/X-Request-Id' });
      if (idempotent) {
        const declared = (op.parameters as Json[]).find((p) => p.in === 'header' && String(p.name).toLowerCase() === 'idempotency-key');
        if (declared) {
          // A route's header schema names it in lower case (as Node reads headers): spelled as everywhere else.
          declared.name = IDEMPOTENCY_KEY.name;
          declared.example ??= IDEMPOTENCY_KEY.example;
        } else op.parameters.push(IDEMPOTENCY_KEY);
      }
      // A send answers the message it made: its status is set.
      if (idempotent && op.responses['201']?.content?.['application/json']?.schema?.$ref === '#/components/schemas/Message') {
        op.responses['201'].content['application/json'].schema = { $ref: '#/components/schemas/SentMessage' };
      }
      const example = EXAMPLES[`${method.toUpperCase()} ${path}`];
      if (example) addExample(op, example);
      addSampleExamples(op, path, sampler);
    }
  }
  // A copy: the document's deeper schemas may be the routes' own objects, which the validator keeps reading.
  return asUnions(structuredClone(doc)) as Json;
}

/** The if/then forms of `tagged` (routes/rcs.ts) and of the carousel card, as generators read a union. */
function asUnions(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(asUnions);
  if (node === null || typeof node !== 'object') return node;
  const o = node as Json;
  for (const key of Object.keys(o)) o[key] = asUnions(o[key]);
  const variants = Array.isArray(o.allOf) ? (o.allOf as Json[]) : [];
  // The document writes a `const` as a one-value `enum`.
  const tagOf = (v: Json) => v.if?.properties?.type?.const ?? (v.if?.properties?.type?.enum?.length === 1 ? v.if.properties.type.enum[0] : undefined);
  if (variants.length > 0 && variants.every((v) => tagOf(v) !== undefined && v.then && Object.keys(v).length === 2)) {
    delete o.allOf;
    o.oneOf = variants.map((v) => v.then);
    o.discriminator = { propertyName: 'type' };
  } else if (o.if && o.then && o.else) {
    o.anyOf = [o.then, o.else];
    delete o.if;
    delete o.then;
    delete o.else;
  }
  return o;
}

/** `SentMessage`: the message object of a sent (MT) message, whose status and price are always there. */
function addSentMessage(doc: Json): void {
  const schemas = (doc.components.schemas ??= {});
  const message = schemas.Message as Json | undefined;
  if (!message) return;
  if (message.properties?.status) {
    message.properties.status.description ??= 'Set on every sent (MT) message; absent on received (MO) messages';
  }
  schemas.SentMessage ??= {
    description: 'The message object of a sent (MT) message: the answer of a send, where the status and price are always set',
    // The two properties repeated beside `required`: generators read a `required` only with the properties it names,
    // and would leave `status?` optional in the client's types.
    allOf: [
      { $ref: '#/components/schemas/Message' },
      {
        type: 'object',
        required: ['status', 'price'],
        properties: { direction: { const: 'MT' }, status: message.properties?.status ?? {}, price: message.properties?.price ?? {} },
      },
    ],
  };
}

function addExample(op: Json, example: OperationExample): void {
  const json = op.requestBody?.content?.['application/json'];
  if (example.request !== undefined && json && json.example === undefined) json.example = example.request;
  if (example.response) {
    const answer = op.responses?.[example.response.status]?.content?.['application/json'];
    if (answer && answer.example === undefined) answer.example = example.response.body;
  }
}

/** The name of a path parameter as the samples know it: `{id}` after `messages` is a `messageId`. */
function parameterName(path: string, name: string): string {
  if (name !== 'id') return name;
  const segments = path.split('/');
  const before = segments[segments.indexOf('{id}') - 1] ?? '';
  const noun = pascal(singular(before));
  return `${noun[0]?.toLowerCase() ?? ''}${noun.slice(1)}Id`;
}

/** Examples from the schemas (openapi-samples.ts) where the operation has none: parameters, body, success answer. */
function addSampleExamples(op: Json, path: string, sampler: Sampler): void {
  const type = /^\/(rcs|voice)\//.exec(path)?.[1]?.toUpperCase() ?? 'SMS';
  const message = MESSAGE_EXAMPLES[type]!;
  const channel = message.channel as Json;
  sampler.forOperation(
    path.replace(/\{id\}/, `{${parameterName(path, 'id')}}`),
    { channelId: channel.channelId, 'channel.name': channel.name, type, flow: channel.flow, kind: (message.price as Json).kind ?? 'SMS' },
    { Message: message },
  );
  for (const p of (op.parameters ?? []) as Json[]) {
    if ((p.in !== 'path' && p.in !== 'query') || p.example !== undefined || !p.schema) continue;
    // `searchBy[recipient.to]` filters by a `to`; an optional filter gets an example only where a sample says what it holds.
    const name = parameterName(path, String(p.name)).replace(/^searchBy\[(?:.*\.)?([^.\]]+)\]$/, '$1');
    if (!p.required && sampler.valueOf(name) === undefined) continue;
    const value = sampler.sample(p.schema, name, false);
    if (value !== undefined && value !== null) p.example = value;
  }
  for (const [type, media] of Object.entries((op.requestBody?.content ?? {}) as Record<string, Json>)) {
    if (media.example !== undefined || !media.schema) continue;
    media.example = type === 'text/csv' ? sampler.sample({ type: 'string' }, 'csv') : sampler.sample(media.schema, '', false);
  }
  const legacy = /\/([A-Za-z]+\.do)$/.exec(path)?.[1];
  const successes = Object.entries((op.responses ?? {}) as Record<string, Json>).filter(([s]) => s.startsWith('2'));
  const answers = successes.flatMap(([, r]) => Object.entries((r.content ?? {}) as Record<string, Json>));
  for (const [type, media] of answers) {
    if (media.example !== undefined || !media.schema || media.schema.format === 'binary') continue;
    if (type === 'application/json') media.example = sampler.sample(media.schema, '', true);
    else if (type === 'text/plain' && legacy && LEGACY_ANSWERS[legacy] !== undefined) media.example = LEGACY_ANSWERS[legacy];
    else if (type === 'text/event-stream') media.example = LEGACY_ANSWERS['events'];
  }
}
