// The sampler that makes the examples of the operations without hand-written ones: values by field name, and what the
// schema allows where no sample fits.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SAMPLE_IDS, Sampler } from '../../../src/doors/rest/openapi-samples.ts';

const doc = {
  components: {
    schemas: {
      Channel: { type: 'object', required: ['channelId', 'name'], properties: { channelId: { type: 'string' }, name: { type: 'string' } } },
      Message: { type: 'object', properties: { messageId: { type: 'string' } } },
    },
  },
};

test('fields get the shared sample of their name, ids and dates included; names say what the object is', () => {
  const sampler = new Sampler(doc);
  sampler.forOperation('/commons/v1/organisations/{organisationId}', {}, {});
  const value = sampler.sample({
    type: 'object',
    required: ['organisationId', 'name', 'creationDate', 'to'],
    properties: {
      organisationId: { type: 'string' },
      name: { type: 'string' },
      creationDate: { type: 'string' },
      to: { type: 'string' },
      channel: { $ref: '#/components/schemas/Channel' },
      href: { type: 'string' },
    },
  }) as any;
  assert.equal(value.organisationId, SAMPLE_IDS.organisationId);
  assert.equal(value.name, 'Acme');
  assert.equal(value.channel.name, 'Notifications');
  assert.match(value.creationDate, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  assert.equal(value.to, '33612345678');
  // The href of what the operation answers: its path with the parameters' samples.
  assert.equal(value.href, `https://tern.example.com/commons/v1/organisations/${SAMPLE_IDS.organisationId}`);
});

test('a sample the schema refuses is not used: its pattern, enum, length or range decides', () => {
  const sampler = new Sampler(doc);
  assert.equal(sampler.sample({ type: 'string', enum: ['MARKETING', 'OTP'] }, 'flow'), 'MARKETING');
  assert.equal(sampler.sample({ type: 'string', maxLength: 8 }, 'password'), 'Kq7vP2xz');
  assert.equal(sampler.sample({ type: 'string', pattern: '^[A-Z]{2}$' }, 'country'), 'FR');
  assert.equal(sampler.sample({ type: 'integer', minimum: 1000 }, 'pageSize'), 1000);
  assert.equal(sampler.sample({ type: 'string', minLength: 3 }, 'unknownField'), 'unknownField');
  assert.equal(sampler.sample({ type: 'string', format: 'uuid' }, 'something'), SAMPLE_IDS.messageId);
  // A number or a string: the branch of the sample's type.
  assert.equal(sampler.sample({ anyOf: [{ type: 'string' }, { type: 'number' }] }, 'creditAmount'), 50);
  // A field whose schema gives its own example keeps it.
  assert.equal(sampler.sample({ type: 'string', examples: ['APPROVED'] }, 'status'), 'APPROVED');
});

test('requests show the required fields and the common ones; answers show all but the exceptional', () => {
  const sampler = new Sampler(doc);
  const schema = {
    type: 'object',
    required: ['recipient'],
    properties: {
      recipient: { type: 'object', required: ['to'], properties: { to: { type: 'string' } } },
      refClient: { type: 'string' },
      codeLength: { type: 'integer' },
      revocationDate: { type: 'string' },
    },
  };
  assert.deepEqual(sampler.sample(schema, '', false), { recipient: { to: '33612345678' }, refClient: 'order-42' });
  assert.deepEqual(sampler.sample(schema, '', true), { recipient: { to: '33612345678' }, refClient: 'order-42', codeLength: 6 });
  // minProperties: optional fields are added until it holds.
  assert.deepEqual(Object.keys(sampler.sample({ type: 'object', minProperties: 1, properties: { codeLength: { type: 'integer' } } }, '', false) as object), [
    'codeLength',
  ]);
});

/** A JSON Schema `if`/`then` part: a schema, not a promise. */
const conditional = (condition: object, then: object) =>
  // oxlint-disable-next-line unicorn/no-thenable
  ({ if: condition, then });

test('if/then parts apply where the value matches; a named schema answers its example for the operation', () => {
  const sampler = new Sampler(doc);
  const body = {
    type: 'object',
    required: ['type'],
    properties: { type: { type: 'string', enum: ['TEXT', 'FILE'] } },
    allOf: [
      conditional(
        { properties: { type: { enum: ['TEXT'] } } },
        { type: 'object', required: ['type', 'text'], properties: { type: { enum: ['TEXT'] }, text: { type: 'string' } } },
      ),
      conditional({ properties: { type: { enum: ['FILE'] } } }, { type: 'object', required: ['fileUrl'], properties: { fileUrl: { type: 'string' } } }),
    ],
  };
  assert.deepEqual(sampler.sample(body, '', false), { type: 'TEXT', text: 'Your code is 123456' });
  sampler.forOperation('/rcs/v1/messages', { type: 'RCS' }, { Message: { messageId: 'm-1', type: 'RCS' } });
  assert.deepEqual(sampler.sample({ type: 'array', items: { $ref: '#/components/schemas/Message' } }), [{ messageId: 'm-1', type: 'RCS' }]);
  assert.equal(sampler.sample({ type: 'string' }, 'type'), 'RCS');
});
