import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { assertError, createTenant, forEachDialect, request, startTestServer, type TestServer } from '../../support/server.ts';

const FR_SMS = 0.045;
const round6 = (x: number) => Math.round(x * 1e6) / 1e6;
const HOUR = 3_600_000;
const inHours = (h: number) => new Date(Date.now() + h * HOUR).toISOString();

forEachDialect('SMS templates with variables', (dialect) => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer(dialect);
  });
  after(async () => {
    await server.stop();
  });

  async function makeTemplate(key: string, channelId: string, body: Record<string, unknown>) {
    return request(server, 'POST', `/sms/v1/channels/${channelId}/templates`, { key, body });
  }

  test('templates are created, listed, read, changed and deleted on the key’s own channel', async () => {
    const t = await createTenant(server, { balance: 5 });
    const base = `/sms/v1/channels/${t.channelId}/templates`;
    const created = await makeTemplate(t.key, t.channelId, { name: 'welcome', text: 'Hello {{firstName|there}}, code {{code}}' });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.name, 'welcome');
    assert.deepEqual(created.body.variables, ['firstName', 'code']);
    const id = created.body.templateId;

    assertError(await makeTemplate(t.key, t.channelId, { name: 'welcome', text: 'Hi' }), 409, '409.001', /name/);
    const list = await request(server, 'GET', base, { key: t.key });
    assert.deepEqual(
      list.body.items.map((x: any) => x.templateId),
      [id],
    );
    const read = await request(server, 'GET', `${base}/${id}`, { key: t.key });
    assert.equal(read.body.text, 'Hello {{firstName|there}}, code {{code}}');

    const changed = await request(server, 'PATCH', `${base}/${id}`, { key: t.key, body: { text: 'Hi {{firstName}}' } });
    assert.equal(changed.status, 200, changed.text);
    assert.deepEqual([changed.body.name, changed.body.variables], ['welcome', ['firstName']]);

    const other = await createTenant(server, { balance: 5 });
    assert.equal((await request(server, 'GET', `${base}/${id}`, { key: other.key })).status, 403, 'another key cannot reach this channel');
    assertError(await request(server, 'GET', `/sms/v1/channels/${other.channelId}/templates/${id}`, { key: other.key }), 404, '404.001');

    const deleted = await request(server, 'DELETE', `${base}/${id}`, { key: t.key });
    assert.equal(deleted.status, 200, deleted.text);
    assertError(await request(server, 'GET', `${base}/${id}`, { key: t.key }), 404, '404.001');
  });

  test('bad templates are refused: unclosed or nameless placeholders, undeclared variables', async () => {
    const t = await createTenant(server);
    for (const [text, detail] of [
      ['Hi {{name', /not closed/],
      ['Hi {{first name}}', /not a variable/],
      ['Hi {{}}', /not a variable/],
    ] as const) {
      assertError(await makeTemplate(t.key, t.channelId, { name: 'x', text }), 400, '400.001', detail);
    }
    const undeclared = await makeTemplate(t.key, t.channelId, { name: 'x', text: 'Hi {{name}} from {{city}}', variables: ['name'] });
    assertError(undeclared, 400, '400.001', /body\.text.*city/);
    assert.deepEqual((await request(server, 'GET', `/sms/v1/channels/${t.channelId}/templates`, { key: t.key })).body.items, []);
  });

  test('a send by template id renders the text and prices it; missing values and both text and template are 400', async () => {
    const t = await createTenant(server, { balance: 5 });
    const tpl = (await makeTemplate(t.key, t.channelId, { name: 'otp', text: 'Hello {{firstName|there}}, your code is {{code}}' })).body;
    const sent = await request(server, 'POST', '/sms/v1/messages', {
      key: t.key,
      body: { recipient: { to: '33612345678' }, template: { id: tpl.templateId, values: { code: '1234' } } },
    });
    assert.equal(sent.status, 201, sent.text);
    assert.equal(sent.body.body.text, 'Hello there, your code is 1234');
    assert.equal(sent.body.body.messagePartCount, 1);
    assert.equal(sent.body.price.amount, FR_SMS);

    const long = await request(server, 'POST', '/sms/v1/messages', {
      key: t.key,
      body: { recipient: { to: '33612345678' }, template: { id: tpl.templateId, values: { firstName: 'x'.repeat(150), code: '1' } } },
    });
    assert.equal(long.status, 201, long.text);
    assert.deepEqual([long.body.body.messagePartCount, long.body.price.amount], [2, round6(2 * FR_SMS)]);

    const send = (body: Record<string, unknown>) =>
      request(server, 'POST', '/sms/v1/messages', { key: t.key, body: { recipient: { to: '33612345678' }, ...body } });
    assertError(await send({ template: { id: tpl.templateId, values: {} } }), 400, '400.001', /body\.template\.values\.code.*no value for the variable code/);
    assertError(await send({ template: { id: tpl.templateId, values: { code: '1', nmae: 'x' } } }), 400, '400.001', /nmae/);
    assertError(await send({ body: { text: 'hi' }, template: { id: tpl.templateId, values: { code: '1' } } }), 400, '400.001', /not both/);
    assertError(await send({ body: {} }), 400, '400.001', /body\.text or template is required/);
    assertError(await send({ template: { id: 'nope' } }), 404, '404.001', /template\.id/);
    const other = await createTenant(server, { balance: 5 });
    assertError(
      await request(server, 'POST', '/sms/v1/messages', {
        key: other.key,
        body: { recipient: { to: '33612345678' }, template: { id: tpl.templateId, values: { code: '1' } } },
      }),
      404,
      '404.001',
    );
  });

  test('a campaign from a CSV renders and prices each row on its own text', async () => {
    const t = await createTenant(server, { balance: 5 });
    const tpl = (await makeTemplate(t.key, t.channelId, { name: 'promo', text: 'Hi {{firstName|there}}, {{offer}} in {{city}}' })).body;
    const csv = [
      'phone;firstName;offer;city;segment',
      `33612345601;Ada;-20%;Paris;a`,
      `33612345602;;-10%;Lyon;b`,
      `33612345603;Bob;${'big '.repeat(40)};Nice;c`,
    ].join('\n');
    const created = await request(server, 'POST', `/sms/v1/channels/${t.channelId}/campaigns`, {
      key: t.key,
      body: { csv, template: { id: tpl.templateId }, refClient: 'spring', sentDate: inHours(2) },
    });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(created.body.body.template, { id: tpl.templateId, name: 'promo' });
    assert.equal(created.body.recipients, 3);
    assert.deepEqual(created.body.counts.byStatus, { SCHEDULED: 3 });
    const list = await request(server, 'GET', `/sms/v1/campaigns/${created.body.campaignId}/messages?pageSize=10`, { key: t.key });
    assert.equal(list.status, 200, list.text);
    const byTo = new Map(list.body.items.map((m: any) => [m.recipient.to, m]));
    const texts = ['33612345601', '33612345602', '33612345603'].map((to) => (byTo.get(`+${to}`) as any)?.body.text ?? (byTo.get(to) as any)?.body.text);
    assert.deepEqual(texts, ['Hi Ada, -20% in Paris', 'Hi there, -10% in Lyon', `Hi Bob, ${'big '.repeat(40)} in Nice`]);
    const parts = list.body.items.map((m: any) => [m.body.text.length > 160 ? 2 : 1, m.body.messagePartCount, m.price.amount]);
    for (const [expected, got, price] of parts) {
      assert.equal(got, expected);
      assert.equal(price, round6(expected * FR_SMS));
    }
  });

  test('a campaign quote shows the range of parts and prices of the rendered texts', async () => {
    const t = await createTenant(server, { balance: 5 });
    const tpl = (await makeTemplate(t.key, t.channelId, { name: 'promo', text: 'Hi {{firstName|there}}' })).body;
    const csv = `number,firstName\n33612345601,Ada\n33612345602,${'x'.repeat(200)}\nnot-a-number,Bob\n`;
    const quote = await request(server, 'POST', '/sms/v1/campaigns/quote', { key: t.key, body: { csv, template: { id: tpl.templateId } } });
    assert.equal(quote.status, 200, quote.text);
    assert.deepEqual(quote.body, {
      recipients: 3,
      refused: 1,
      messagePartCount: { min: 1, max: 2 },
      price: { min: FR_SMS, max: round6(2 * FR_SMS), total: round6(3 * FR_SMS), currency: 'EUR' },
    });
    const missing = await request(server, 'POST', '/sms/v1/campaigns/quote', {
      key: t.key,
      body: {
        recipients: [{ to: '33612345601' }],
        template: { id: (await makeTemplate(t.key, t.channelId, { name: 'bare', text: '{{code}}' })).body.templateId },
      },
    });
    assertError(missing, 400, '400.001', /recipients\[0\]: no value for the variable code/);
  });

  test('a campaign with a missing value is a 400 naming the row and the variable, and nothing is sent', async () => {
    const t = await createTenant(server, { balance: 5 });
    const tpl = (await makeTemplate(t.key, t.channelId, { name: 'promo', text: 'Hi {{firstName|there}}, {{offer}}' })).body;
    const campaign = (body: Record<string, unknown>) =>
      request(server, 'POST', '/sms/v1/campaigns', { key: t.key, body: { template: { id: tpl.templateId }, ...body } });
    const csv = 'number,firstName,offer\n33612345601,Ada,-20%\n33612345602,Bob,\n';
    assertError(await campaign({ csv }), 400, '400.001', /^body\.csv\.offer: row 2 \(line 3\): no value for the variable offer/);
    assertError(
      await campaign({
        recipients: [
          { to: '33612345601', values: { offer: 'x' } },
          { to: '33612345602', values: { firstName: 'Bob' } },
        ],
      }),
      400,
      '400.001',
      /body\.recipients\[1\]\.values\.offer: recipients\[1\]: no value for the variable offer/,
    );
    assertError(await campaign({ csv: 'firstName,offer\nAda,x\n' }), 400, '400.001', /body\.csv.*number column/);
    assertError(await campaign({ csv, recipients: [{ to: '33612345601' }] }), 400, '400.001', /not both/);
    assertError(await campaign({ csv: 'number,offer\n"33612345601,x\n' }), 400, '400.001', /body\.csv.*line 2/);
    const list = await request(server, 'GET', '/sms/v1/campaigns', { key: t.key });
    assert.deepEqual(list.body.items, [], 'no campaign was made');
  });
});
