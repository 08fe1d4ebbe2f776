// The OpenAPI document as a client generator reads it: an operationId on every operation, the error answers and the
// headers every operation can give, SentMessage with its status, examples that match their schemas; and the server
// checked against it: what each operation answers is documented, and its answers match their schemas.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { operationIdOf, singular } from '../../../src/doors/rest/openapi-enrich.ts';
import { EXAMPLES } from '../../../src/doors/rest/openapi-examples.ts';
import { createTenant, request, startTestServer, type Tenant, type TestServer } from '../../support/server.ts';
import { eventually } from '../../support/wait.ts';

test('operationIds: verbNoun from the method and the path', () => {
  const cases: Array<[string, string, string]> = [
    ['get', '/sms/v1/messages', 'listSmsMessages'],
    ['post', '/sms/v1/messages', 'createSmsMessage'],
    ['get', '/sms/v1/messages/{id}', 'getSmsMessage'],
    ['delete', '/sms/v1/messages/{id}', 'deleteSmsMessage'],
    ['post', '/sms/v1/campaigns/{campaignId}/messages', 'createSmsCampaignMessage'],
    ['get', '/commons/v1/organisations/{id}/transfers/{transferId}', 'getCommonsOrganisationTransfer'],
    ['patch', '/admin/v1/routes/{id}', 'updateAdminRoute'],
    ['put', '/admin/v1/prices', 'setAdminPrices'],
    ['post', '/admin/v1/routes/test', 'testAdminRoutes'],
    ['post', '/commons/v1/webhooks/deliveries/{id}/replay', 'replayCommonsWebhooksDelivery'],
    ['get', '/metrics', 'getMetrics'],
    ['get', '/http/1.6/sendSMSBatch.do', 'legacySendSmsBatch'],
    ['post', '/http/1.6/sendSMS.do', 'legacySendSmsByForm'],
    ['get', '/http/2.0/createAuthorisation.do', 'legacyCreateAuthorisation'],
  ];
  for (const [method, path, id] of cases) assert.equal(operationIdOf(method, path), id, `${method} ${path}`);
  assert.deepEqual(['messages', 'categories', 'addresses', 'batches', 'status', 'lookup'].map(singular), [
    'message',
    'category',
    'address',
    'batch',
    'status',
    'lookup',
  ]);
});

let server: TestServer;
let doc: any;
before(async () => {
  server = await startTestServer('sqlite');
  const res = await request(server, 'GET', '/openapi.json');
  assert.equal(res.status, 200);
  doc = res.body;
});
after(() => server.stop());

/** Every operation of the document, with its method and path. */
function operations(): Array<{ method: string; path: string; op: any }> {
  const out = [];
  for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
    for (const method of ['get', 'post', 'put', 'patch', 'delete']) if (item[method]) out.push({ method, path, op: item[method] });
  }
  return out;
}

const resolve = (x: any) =>
  x?.$ref
    ? x.$ref
        .split('/')
        .slice(1)
        .reduce((o: any, k: string) => o[k], doc)
    : x;

test('the document is valid OpenAPI 3.1', async () => {
  const result = await new Validator().validate(doc);
  assert.equal(result.valid, true, JSON.stringify(result.errors, null, 1)?.slice(0, 2000));
});

test('every operation has an operationId, verbNoun, unique', () => {
  const seen = new Map<string, string>();
  const ops = operations();
  assert.ok(ops.length > 150, `${ops.length} operations`);
  for (const { method, path, op } of ops) {
    const where = `${method} ${path}`;
    assert.match(op.operationId ?? '', /^[a-z]+[A-Z][A-Za-z0-9]*$/, where);
    assert.ok(!seen.has(op.operationId), `${where} and ${seen.get(op.operationId)}: ${op.operationId}`);
    seen.set(op.operationId, where);
  }
  for (const id of [
    'createSmsMessage',
    'listSmsMessages',
    'getSmsMessage',
    'createSmsCampaign',
    'getCommonsLookup',
    'getCommonsOrganisation',
    'legacySendSms',
  ]) {
    assert.ok(seen.has(id), id);
  }
});

test('every authenticated operation documents 401, 403 and 429 with Retry-After, and its RateLimit headers', () => {
  let authenticated = 0;
  for (const { method, path, op } of operations()) {
    const where = `${method} ${path}`;
    for (const [status, r] of Object.entries(op.responses as Record<string, any>)) {
      assert.ok(resolve(r).headers?.['X-Request-Id'], `${where} ${status}: X-Request-Id`);
    }
    const requestId = (op.parameters ?? []).map(resolve).filter((p: any) => p.in === 'header' && p.name === 'X-Request-Id');
    assert.equal(requestId.length, 1, `${where}: the X-Request-Id parameter, once`);
    assert.equal(requestId[0].required, false, where);
    if (!(op.security?.length > 0) && !path.startsWith('/http/')) continue;
    authenticated++;
    for (const status of ['401', '403', '429']) assert.ok(op.responses[status], `${where} documents ${status}`);
    assert.deepEqual(resolve(op.responses['429'].headers['Retry-After']).schema, { type: 'integer', minimum: 1 }, where);
    const success = Object.keys(op.responses).find((s) => s.startsWith('2'))!;
    for (const h of ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']) assert.ok(op.responses[success].headers[h], `${where} ${success}: ${h}`);
    if (/\{[A-Za-z]*[iI]d\}/.test(path)) assert.ok(op.responses['404'], `${where} documents 404`);
    const hasInput = op.requestBody || (op.parameters ?? []).some((p: any) => p.in === 'query' || p.in === 'path');
    if (hasInput) assert.ok(op.responses['400'], `${where} documents 400`);
  }
  assert.ok(authenticated > 140, `${authenticated} authenticated operations`);
});

test('sends take an Idempotency-Key, may answer 409, and answer a SentMessage whose status is required', () => {
  const byId = new Map(operations().map((o) => [o.op.operationId, o.op]));
  for (const id of ['createSmsMessage', 'createRcsMessage', 'createVoiceMessage', 'createSmsCampaignMessage', 'createCommonsOrganisationTransfer']) {
    const op = byId.get(id);
    assert.ok(op, id);
    assert.ok(
      op.parameters.some((p: any) => p.in === 'header' && p.name.toLowerCase() === 'idempotency-key'),
      `${id}: Idempotency-Key`,
    );
    assert.ok(op.responses['409'], `${id}: 409`);
  }
  assert.deepEqual(byId.get('createSmsMessage').responses['201'].content['application/json'].schema, { $ref: '#/components/schemas/SentMessage' });
  const sent = doc.components.schemas.SentMessage;
  assert.deepEqual(sent.allOf[0], { $ref: '#/components/schemas/Message' });
  assert.deepEqual(sent.allOf[1].required, ['status', 'price']);
  assert.ok(doc.components.schemas.Message.required.includes('messageId'));
});

/** A validator of values against the document's schemas (their #/components/… references resolve in it). */
function schemaChecker() {
  const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
  let n = 0;
  return (schema: any, value: unknown, where: string) => {
    const validate = ajv.compile({ ...schema, $id: `urn:check:${n++}`, components: doc.components });
    assert.ok(validate(value), `${where}: ${JSON.stringify(validate.errors)?.slice(0, 500)} in ${JSON.stringify(value)?.slice(0, 300)}`);
  };
}

/** The media types an example cannot be written for: binary answers (a voice message's audio). */
const isBinary = (media: any) => media.schema?.format === 'binary';

test('every operation has examples: parameters, body and success answer, each valid against its schema', () => {
  const check = schemaChecker();
  const byKey = new Map(operations().map((o) => [`${o.method.toUpperCase()} ${o.path}`, o.op]));
  let bodies = 0;
  for (const { method, path, op } of operations()) {
    const where = `${method.toUpperCase()} ${path}`;
    for (const p of op.parameters ?? []) {
      if (p.required || p.in === 'path') assert.notEqual(p.example, undefined, `${where}: parameter ${p.name} has an example`);
      if (p.example !== undefined) check(p.schema, p.example, `${where} parameter ${p.name}`);
    }
    for (const [type, media] of Object.entries((op.requestBody?.content ?? {}) as Record<string, any>)) {
      assert.notEqual(media.example, undefined, `${where}: ${type} body has an example`);
      check(media.schema, media.example, `${where} ${type} body`);
      bodies++;
    }
    const success = Object.keys(op.responses).find((s) => s.startsWith('2'));
    assert.ok(success, `${where} has a success answer`);
    for (const [type, media] of Object.entries((resolve(op.responses[success]).content ?? {}) as Record<string, any>)) {
      if (isBinary(media)) continue;
      assert.notEqual(media.example, undefined, `${where}: ${success} ${type} has an example`);
      check(media.schema, media.example, `${where} ${success} ${type}`);
    }
    // Each error answer shows one as Tern writes it: its errorCode of its status.
    for (const [status, answer] of Object.entries(op.responses as Record<string, any>)) {
      const media = resolve(answer).content?.['application/json'];
      if (!/^[45]/.test(status) || media?.schema?.$ref !== '#/components/schemas/Error') continue;
      assert.ok(media.example?.errorCode?.startsWith(`${status}.`), `${where} ${status}: ${JSON.stringify(media.example)}`);
      check(media.schema, media.example, `${where} ${status}`);
    }
  }
  assert.ok(bodies > 90, `${bodies} request bodies`);
  // The hand-written examples, on the most used operations, are the ones the document shows.
  assert.ok(Object.keys(EXAMPLES).length >= 20);
  for (const [key, example] of Object.entries(EXAMPLES)) {
    const op = byKey.get(key);
    assert.ok(op, `${key} is an operation`);
    if (example.request !== undefined) assert.deepEqual(op.requestBody.content['application/json'].example, example.request, key);
    if (example.response) assert.deepEqual(resolve(op.responses[example.response.status]).content['application/json'].example, example.response.body, key);
  }
  for (const key of [
    'POST /sms/v1/messages',
    'GET /sms/v1/messages',
    'POST /sms/v1/campaigns',
    'POST /sms/v1/otp',
    'POST /sms/v1/otp/{id}/check',
    'GET /commons/v1/lookup/{msisdn}',
    'GET /commons/v1/organisations/{id}',
    'GET /commons/v1/webhooks/deliveries',
    'POST /commons/v1/channels/{id}/credentials',
    'POST /commons/v1/organisations/{id}/transfers',
  ]) {
    assert.ok(EXAMPLES[key], key);
  }
  // The examples of one operation speak of the same things: an RCS operation answers RCS messages.
  const rcs = resolve(byKey.get('GET /rcs/v1/messages').responses['200']).content['application/json'].example;
  assert.equal(rcs.items[0].type, 'RCS');
  assert.equal(
    byKey.get('GET /sms/v1/otp/{id}').parameters.find((p: any) => p.name === 'id').example,
    (EXAMPLES['POST /sms/v1/otp']!.response!.body as { otpId: string }).otpId,
  );
});

/** An operation's path with its parameters' examples in it, and its JSON body example. */
function exampleCall(path: string, op: any): { url: string; body: unknown } {
  const url = path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const example = op.parameters.find((p: any) => p.in === 'path' && p.name === name)?.example;
    return encodeURIComponent(String(example));
  });
  return { url, body: op.requestBody?.content?.['application/json']?.example };
}

test('called without a key, every authenticated operation answers a status it documents: 401, or 400 for a bad request', async () => {
  let unauthorised = 0;
  for (const { method, path, op } of operations()) {
    if (!(op.security?.length > 0) && !path.startsWith('/http/')) continue;
    const { url, body } = exampleCall(path, op);
    const res = await request(server, method.toUpperCase(), url, { ...(body !== undefined && { body }) });
    const where = `${method.toUpperCase()} ${path} answered ${res.status} ${res.text.slice(0, 200)}`;
    assert.ok(op.responses[String(res.status)], where);
    assert.ok([400, 401].includes(res.status), where);
    if (res.status === 401) unauthorised++;
  }
  assert.ok(unauthorised > 150, `${unauthorised} operations answered 401`);
});

let tenants: Record<'SMS' | 'RCS' | 'VOICE', Tenant>;

/** The key an operation is called with: the operator's for /admin, else an ADMIN key of a channel of its type. */
const keyFor = (path: string) =>
  path.startsWith('/admin/') ? server.adminKey : path.startsWith('/rcs/') ? tenants.RCS.key : path.startsWith('/voice/') ? tenants.VOICE.key : tenants.SMS.key;

test('with a key, an operation on an id that names nothing answers a documented 404 (or 403 for another channel)', async () => {
  tenants = {
    SMS: await createTenant(server, { balance: 100 }),
    RCS: await createTenant(server, { type: 'RCS', balance: 100 }),
    VOICE: await createTenant(server, { type: 'VOICE', balance: 100 }),
  };
  let notFound = 0;
  for (const { method, path, op } of operations()) {
    if (!/\{[A-Za-z]*[iI]d\}/.test(path)) continue;
    const { url, body } = exampleCall(path, op);
    // The examples' ids name nothing on this server; the body examples pass the checks made before the lookup.
    const res = await request(server, method.toUpperCase(), url, { key: keyFor(path), ...(body !== undefined && { body }) });
    const where = `${method.toUpperCase()} ${path} answered ${res.status} ${res.text.slice(0, 200)}`;
    assert.ok(op.responses[String(res.status)], where);
    assert.ok([403, 404].includes(res.status), where);
    if (res.status === 404) {
      assert.equal(res.body.errorCode.slice(0, 3), '404', where);
      notFound++;
    }
  }
  assert.ok(notFound > 80, `${notFound} operations answered 404`);
});

test('real answers of the main operations match their documented schemas: required fields there, no undeclared ones', async () => {
  const check = schemaChecker();
  const byKey = new Map(operations().map((o) => [`${o.method.toUpperCase()} ${o.path}`, o.op]));
  let checked = 0;
  /** Calls the operation `key` (`METHOD /path/{param}`) on `url` and checks its answer against the schema of its status. */
  const call = async (key: string, url: string, body?: unknown, apiKey = keyFor(url)) => {
    const op = byKey.get(key);
    assert.ok(op, key);
    const [method] = key.split(' ');
    const res = await request(server, method!, url, { key: apiKey, ...(body !== undefined && { body }) });
    assert.ok(res.status < 300, `${key}: ${res.status} ${res.text.slice(0, 300)}`);
    const answer = resolve(op.responses[String(res.status)]);
    assert.ok(answer, `${key} documents ${res.status}`);
    const media = answer.content?.['application/json'];
    if (media) {
      check(media.schema, res.body, `${key} ${res.status}`);
      checked++;
    }
    return res.body;
  };
  const { SMS, RCS, VOICE } = tenants;
  const sent = await call('POST /sms/v1/messages', '/sms/v1/messages', {
    recipient: { to: '33612345678' },
    body: { text: 'Your code is 123456' },
    refClient: 'order-42',
  });
  await eventually(async () => (await request(server, 'GET', `/sms/v1/messages/${sent.messageId}`, { key: SMS.key })).body.status?.value === 'DELIVERED');
  await call('GET /sms/v1/messages/{id}', `/sms/v1/messages/${sent.messageId}`);
  await call('GET /sms/v1/messages', '/sms/v1/messages');
  await call('GET /sms/v1/messages/{id}/events', `/sms/v1/messages/${sent.messageId}/events`);
  await call('POST /sms/v1/channels/{channelId}/messages', `/sms/v1/channels/${SMS.channelId}/messages`, {
    recipient: { to: '33612345679' },
    body: { text: 'Hello' },
  });
  await call('POST /sms/v1/messages/quote', '/sms/v1/messages/quote', { recipient: { to: '33612345678' }, body: { text: 'Hello' } });
  const campaign = await call('POST /sms/v1/campaigns', '/sms/v1/campaigns', {
    recipients: [{ to: '33612345671' }, { to: '33612345672' }, { to: 'not a number' }],
    body: { text: 'Spring sale: -20% today' },
  });
  assert.equal(campaign.errors.length, 1);
  await call('GET /sms/v1/campaigns/{campaignId}', `/sms/v1/campaigns/${campaign.campaignId}`);
  await call('GET /sms/v1/campaigns', '/sms/v1/campaigns');
  await call('GET /sms/v1/campaigns/{campaignId}/messages', `/sms/v1/campaigns/${campaign.campaignId}/messages`);
  await call('POST /sms/v1/campaigns/{campaignId}/messages', `/sms/v1/campaigns/${campaign.campaignId}/messages`, {
    recipient: { to: '33612345673' },
    body: { text: 'Spring sale: -20% today' },
  });
  const otp = await call('POST /sms/v1/otp', '/sms/v1/otp', { recipient: { to: '33612345678' }, refClient: 'signup-42' });
  await call('POST /sms/v1/otp/{id}/check', `/sms/v1/otp/${otp.otpId}/check`, { code: '0000000' });
  await call('GET /sms/v1/otp/{id}', `/sms/v1/otp/${otp.otpId}`);
  await call('GET /commons/v1/lookup/{msisdn}', '/commons/v1/lookup/33612345678');
  await call('GET /commons/v1/organisations/{id}', `/commons/v1/organisations/${SMS.organisationId}`);
  await call('GET /commons/v1/organisations/{id}/ledger', `/commons/v1/organisations/${SMS.organisationId}/ledger`);
  await call('GET /commons/v1/organisations/{id}/transfers', `/commons/v1/organisations/${SMS.organisationId}/transfers`);
  await call('GET /commons/v1/channels', '/commons/v1/channels');
  await call('GET /commons/v1/channels/{id}', `/commons/v1/channels/${SMS.channelId}`);
  await call('GET /commons/v1/consumptions', '/commons/v1/consumptions');
  const key = await call('POST /commons/v1/channels/{id}/credentials', `/commons/v1/channels/${SMS.channelId}/credentials`, {
    name: 'Production server',
    roles: ['USER'],
  });
  assert.equal(typeof key.value, 'string');
  await call('GET /commons/v1/channels/{id}/credentials', `/commons/v1/channels/${SMS.channelId}/credentials`);
  await call('GET /commons/v1/webhooks/deliveries', '/commons/v1/webhooks/deliveries');
  const rcs = await call('POST /rcs/v1/messages', '/rcs/v1/messages', { recipient: { to: '33612345678' }, body: { type: 'TEXT', text: 'Your parcel' } });
  await call('GET /rcs/v1/messages/{id}', `/rcs/v1/messages/${rcs.messageId}`, undefined, RCS.key);
  const voice = await call('POST /voice/v1/messages', '/voice/v1/messages', {
    recipient: { to: '33612345678' },
    body: { text: 'Your code', language: 'en-GB' },
  });
  await call('GET /voice/v1/messages/{id}', `/voice/v1/messages/${voice.messageId}`, undefined, VOICE.key);
  await call('GET /admin/v1/organisations/{id}', `/admin/v1/organisations/${SMS.organisationId}`);
  await call('GET /admin/v1/connectors', '/admin/v1/connectors');
  await call('GET /admin/v1/routes', '/admin/v1/routes');
  await call('GET /admin/v1/prices', '/admin/v1/prices');
  assert.ok(checked >= 32, `${checked} answers checked`);
});

test('every list and read without a path parameter answers, with a key, a body its schema accepts', async () => {
  const check = schemaChecker();
  let checked = 0;
  for (const { method, path, op } of operations()) {
    if (method !== 'get' || path.includes('{') || path.startsWith('/http/')) continue;
    const res = await fetch(`${server.url}${path}`, { headers: { 'x-api-key': keyFor(path) }, signal: AbortSignal.timeout(5000) });
    const type = res.headers.get('content-type') ?? '';
    // The event stream never ends: its first bytes are enough.
    if (type.startsWith('text/event-stream')) {
      await res.body?.cancel();
      continue;
    }
    const text = await res.text();
    const where = `GET ${path} answered ${res.status} ${text.slice(0, 200)}`;
    assert.ok(op.responses[String(res.status)], where);
    const media = resolve(op.responses[String(res.status)]).content?.['application/json'];
    if (!media || !type.includes('json')) continue;
    check(media.schema, JSON.parse(text), where);
    if (res.status === 200) checked++;
  }
  assert.ok(checked >= 25, `${checked} answers checked`);
});
