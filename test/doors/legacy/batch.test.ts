import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createTenant, forEachDialect, request, startTestServer, type Tenant, type TestServer } from '../../support/server.ts';

const BOUNDARY = '----TernBatchBoundary7MA4YWxk';

/** A multipart body as curl -F and Guzzle write it: text fields, then the file with its exact bytes. */
function multipart(fields: Record<string, string>, file: Buffer | null, filename = 'fichier.csv'): Buffer {
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    parts.push(Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  }
  if (file) {
    parts.push(
      Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="fichier"; filename="${filename}"\r\nContent-Type: text/csv\r\n\r\n`),
      file,
      Buffer.from('\r\n'),
    );
  }
  parts.push(Buffer.from(`--${BOUNDARY}--\r\n`));
  return Buffer.concat(parts);
}

async function batch(server: TestServer, query: string, body: Buffer, contentType = `multipart/form-data; boundary=${BOUNDARY}`) {
  const res = await fetch(`${server.url}/http/1.6/sendSMSBatch.do?${query}`, { method: 'POST', headers: { 'content-type': contentType }, body });
  return { status: res.status, text: await res.text() };
}

const ACCEPTED = /^0 \| Accepted \| ([0-9a-f-]{36})$/;

forEachDialect('Legacy HTTP 1.6: sendSMSBatch.do', (dialect) => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer(dialect);
  });
  after(() => server.stop());

  async function messagesOf(t: Tenant, campaignId: string): Promise<any[]> {
    const r = await request(server, 'GET', `/sms/v1/messages?searchBy[campaignId]=${campaignId}&pageSize=100`, { key: t.key });
    assert.equal(r.status, 200, r.text);
    return [...r.body.items].sort((a: any, b: any) => a.recipient.to.localeCompare(b.recipient.to));
  }

  async function balance(t: Tenant): Promise<number> {
    return (await request(server, 'GET', `/admin/v1/organisations/${t.organisationId}`, { key: server.adminKey })).body.balance.amount;
  }

  test('an ISO-8859-15 file, numero;message;emetteur;ref with a header: one campaign, one message per row', async () => {
    const t = await createTenant(server, { balance: 1, channel: { defaultFromField: 'ACME', fromFieldList: ['ACME', 'SHOP'] } });
    const csv = Buffer.concat([
      Buffer.from('numero;message;emetteur;ref\r\n33612345671;Caf'),
      Buffer.from([0xe9, 0x20, 0xa4]),
      Buffer.from(' 2;;r1\r\n0612345672;"Deux; lignes\r\nici";SHOP;\r\n33612345673;Ol'),
      Buffer.from([0xe9]),
      Buffer.from(';;\r\n'),
    ]);
    const a = await batch(server, `accessToken=${encodeURIComponent(t.key)}&refClient=lot-1`, multipart({ emetteur: 'ACME' }, csv));
    const m = ACCEPTED.exec(a.text);
    assert.ok(m, `${a.status} ${a.text}`);
    const campaign = await request(server, 'GET', `/sms/v1/campaigns/${m[1]}`, { key: t.key });
    assert.equal(campaign.status, 200, campaign.text);
    const messages = await messagesOf(t, m[1]!);
    assert.deepEqual(
      messages.map((x) => [x.recipient.to, x.body.text, x.from, x.refClient ?? null]),
      [
        ['33612345671', 'Café € 2', 'ACME', 'r1'],
        ['33612345672', 'Deux; lignes\r\nici', 'SHOP', 'lot-1'],
        ['33612345673', 'Olé', 'ACME', 'lot-1'],
      ],
    );
    assert.equal(await balance(t), Math.round((1 - 3 * 0.045) * 1e6) / 1e6);
    // It is one send to smsStatus.do and smsList.do.
    const status = await fetch(`${server.url}/http/1.6/smsStatus.do?accessToken=${encodeURIComponent(t.key)}&smsID=${m[1]}`);
    assert.match(await status.text(), /^\d+ \| /);
    // smsList.do answers in the legacy charset, ISO-8859-15, as the file came.
    const answer = await fetch(`${server.url}/http/1.6/smsList.do?accessToken=${encodeURIComponent(t.key)}`);
    assert.equal(answer.headers.get('content-type'), 'text/plain; charset=ISO-8859-15');
    const list = new TextDecoder('iso-8859-15').decode(await answer.arrayBuffer());
    assert.match(list, new RegExp(`^${m[1]} \\| .* \\| Café € 2 \\| 33612345671 \\| 0\\.135 \\| 3$`));
  });

  test('the manual’s comma-separated file, sent with FormData like any HTTP client; UTF-8 with a byte order mark; classe_msg=9', async () => {
    const t = await createTenant(server, { balance: 1 });
    const form = new FormData();
    form.append('accessToken', t.key);
    form.append(
      'fichier',
      new Blob(
        ['"numero","message","emetteur"\n"33612345678","This is the body of the message 1, test fichier CSV","RDV","ref123"\n33612345679,"Body 2, test",""\n'],
        { type: 'text/csv' },
      ),
      'fichier.csv',
    );
    const res = await fetch(`${server.url}/http/1.6/sendSMSBatch.do`, { method: 'POST', body: form });
    const text = await res.text();
    const m = ACCEPTED.exec(text);
    assert.ok(m, `${res.status} ${text}`);
    assert.deepEqual(
      (await messagesOf(t, m[1]!)).map((x) => [x.recipient.to, x.body.text, x.from ?? null, x.refClient ?? null]),
      [
        ['33612345678', 'This is the body of the message 1, test fichier CSV', 'RDV', 'ref123'],
        ['33612345679', 'Body 2, test', null, null],
      ],
    );

    const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('33612345678;Grüße ☺;\n', 'utf8')]);
    const u = ACCEPTED.exec((await batch(server, `accessToken=${encodeURIComponent(t.key)}`, multipart({}, bom))).text);
    assert.ok(u);
    const [unicode] = await messagesOf(t, u[1]!);
    assert.equal(unicode.body.text, 'Grüße ☺');
    const nine = ACCEPTED.exec(
      (await batch(server, `accessToken=${encodeURIComponent(t.key)}&classe_msg=9`, multipart({}, Buffer.from('33612345678;€ only\n', 'utf8')))).text,
    );
    assert.ok(nine);
    const [forced] = await messagesOf(t, nine[1]!);
    assert.deepEqual([forced.body.text, forced.body.encoding], ['€ only', 'UNICODE']);
  });

  test('one bad row refuses the file, naming its line and column; nothing is sent or charged', async () => {
    const t = await createTenant(server, { balance: 1, channel: { fromFieldList: ['ACME'] } });
    const key = `accessToken=${encodeURIComponent(t.key)}`;
    const cases: Array<[string, string, RegExp]> = [
      ['33612345678;ok\n33612345679;ok\nabc;bad number\n', '', /^35 \| Missing or invalid parameter: fichier: line 3: numero: must be a phone number/],
      ['33612345678;ok;OTHER\n', '', /^35 \| Missing or invalid parameter: fichier: line 1: emetteur: "OTHER" is not in the channel's fromFieldList$/],
      [`33612345678;${'x'.repeat(200)}\n`, '&nbr_msg=1', /^35 \| .*fichier: line 1: message: needs 2 SMS, more than nbr_msg \(1\)$/],
      [`33612345678;ok;;${'r'.repeat(41)}\n`, '', /^35 \| .*fichier: line 1: ref: at most 40 characters$/],
      ['numero;message\n', '', /^35 \| .*fichier: the file has no row/],
      ['33612345678;"never closed\n', '', /^35 \| .*fichier: line 1: a quoted field is not closed$/],
      ['33612345678;ok\n', '&classe_msg=7', /^35 \| .*classe_msg: must be 2, 4 or 9/],
    ];
    for (const [csv, extra, expected] of cases) {
      const a = await batch(server, key + extra, multipart({}, Buffer.from(csv, 'latin1')));
      assert.equal(a.status, 400, a.text);
      assert.match(a.text, expected);
    }
    const missing = await batch(server, key, multipart({ message: 'x' }, null));
    assert.equal(missing.status, 400);
    assert.match(missing.text, /^35 \| .*fichier: is required/);
    const get = await fetch(`${server.url}/http/1.6/sendSMSBatch.do?${key}`);
    assert.equal(get.status, 400);
    assert.match(await get.text(), /^35 \| .*fichier: is required/);
    const noBoundary = await batch(server, key, Buffer.from('x'), 'multipart/form-data');
    assert.equal(noBoundary.status, 400);
    assert.match(noBoundary.text, /^35 \| .*no boundary/);
    const broken = await batch(server, key, Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="fichier"; filename="a"\r\n\r\n33612345678;x`));
    assert.equal(broken.status, 400);
    assert.match(broken.text, /^35 \| .*multipart\/form-data body is malformed/);
    const otherFile = await batch(
      server,
      key,
      Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="photo"; filename="a.jpg"\r\n\r\nxx\r\n--${BOUNDARY}--\r\n`),
    );
    assert.equal(otherFile.status, 400);
    assert.match(otherFile.text, /^35 \| .*photo: only the fichier part may be a file/);
    assert.equal((await request(server, 'GET', '/sms/v1/messages', { key: t.key })).body.items.length, 0);
    assert.equal((await request(server, 'GET', '/sms/v1/campaigns', { key: t.key })).body.items?.length ?? 0, 0);
    assert.equal(await balance(t), 1);

    const user = await batch(server, 'accessToken=nope', multipart({}, Buffer.from('33612345678;x\n')));
    assert.equal(user.status, 401);
    assert.match(user.text, /^32 \| /);
  });

  test('a file larger than a form but within the batch limit is taken', async () => {
    const t = await createTenant(server, { balance: 100 });
    const rows = Array.from({ length: 2000 }, (_, i) => `3361${String(i).padStart(7, '0')};Message numéro ${i} ${'x'.repeat(500)}`).join('\n');
    const csv = Buffer.from(rows, 'latin1');
    assert.ok(csv.length > 1024 * 1024);
    const a = await batch(server, `accessToken=${encodeURIComponent(t.key)}`, multipart({}, csv));
    assert.match(a.text, ACCEPTED);
  });
});
