// The OpenAPI document as a client generator reads it: an operationId on every operation, the error answers and the
// headers every operation can give, SentMessage with its status, and examples that match their schemas.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { operationIdOf, singular } from '../../../src/doors/rest/openapi-enrich.ts';
import { EXAMPLES } from '../../../src/doors/rest/openapi-examples.ts';
import { request, startTestServer, type TestServer } from '../../support/server.ts';

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
    if (!(op.security?.length > 0) && !path.startsWith('/http/')) continue;
    authenticated++;
    for (const status of ['401', '403', '429']) assert.ok(op.responses[status], `${where} documents ${status}`);
    assert.deepEqual(resolve(op.responses['429'].headers['Retry-After']).schema, { type: 'integer', minimum: 1 }, where);
    const success = Object.keys(op.responses).find((s) => s.startsWith('2'))!;
    for (const h of ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']) assert.ok(op.responses[success].headers[h], `${where} ${success}: ${h}`);
    if (path.includes('{')) assert.ok(op.responses['404'], `${where} documents 404`);
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

test('examples on the most used operations, each valid against its schemas', () => {
  const ajv = new Ajv2020({ strict: false, validateFormats: false });
  let n = 0;
  // Each schema checked with the document's components beside it, where its #/components/… references point.
  const check = (schema: any, value: unknown, where: string) => {
    const validate = ajv.compile({ ...schema, $id: `urn:check:${n++}`, components: doc.components });
    assert.ok(validate(value), `${where}: ${JSON.stringify(validate.errors)?.slice(0, 500)}`);
  };
  const byKey = new Map(operations().map((o) => [`${o.method.toUpperCase()} ${o.path}`, o.op]));
  assert.ok(Object.keys(EXAMPLES).length >= 10);
  for (const [key, example] of Object.entries(EXAMPLES)) {
    const op = byKey.get(key);
    assert.ok(op, `${key} is an operation`);
    if (example.request !== undefined) {
      const content = op.requestBody.content['application/json'];
      assert.deepEqual(content.example, example.request, key);
      check(content.schema, example.request, `${key} request`);
    }
    if (example.response) {
      const content = resolve(op.responses[example.response.status]).content['application/json'];
      assert.deepEqual(content.example, example.response.body, key);
      check(content.schema, example.response.body, `${key} ${example.response.status}`);
    }
  }
  for (const key of [
    'POST /sms/v1/messages',
    'GET /sms/v1/messages',
    'POST /sms/v1/campaigns',
    'GET /commons/v1/lookup/{msisdn}',
    'GET /commons/v1/organisations/{id}',
  ]) {
    assert.ok(EXAMPLES[key], key);
  }
});
