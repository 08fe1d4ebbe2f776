import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { formatLegacyListDate, formatLegacyMinute } from '../../../src/doors/legacy/dates.ts';
import { createTenant, forEachDialect, request, startTestServer, type TestServer } from '../../support/server.ts';
import { eventually } from '../../support/wait.ts';

/** The operations that answer in ISO-8859-15 when the request does not ask for another charset. */
const ISO_ANSWERS = new Set(['smsList.do', 'responseList.do']);

async function raw(server: TestServer, op: string, params: Record<string, string>): Promise<{ status: number; bytes: Buffer; contentType: string | null }> {
  const res = await fetch(`${server.url}/http/1.6/${op}?${new URLSearchParams(params)}`);
  return { status: res.status, bytes: Buffer.from(await res.arrayBuffer()), contentType: res.headers.get('content-type') };
}

async function legacy(server: TestServer, op: string, params: Record<string, string>): Promise<{ status: number; text: string }> {
  const res = await raw(server, op, params);
  const iso = ISO_ANSWERS.has(op);
  assert.equal(res.contentType, iso ? 'text/plain; charset=ISO-8859-15' : 'text/plain; charset=utf-8');
  return { status: res.status, text: new TextDecoder(iso ? 'iso-8859-15' : 'utf-8').decode(res.bytes) };
}

function idOf(a: { status: number; text: string }): string {
  const m = /^0 \| Accepted \| (\S+)$/.exec(a.text);
  assert.ok(m, `${a.status} ${a.text}`);
  return m[1]!;
}

const PARIS = 'Europe/Paris';

forEachDialect('Legacy HTTP 1.6: credit.do, smsList.do, responseList.do', (dialect) => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer(dialect);
  });
  after(() => server.stop());

  test('credit.do always answers a decimal part, as the libraries’ ^-?\\d+\\.\\d+$ wants', async () => {
    const hundred = await createTenant(server, { balance: 100 });
    assert.deepEqual(await legacy(server, 'credit.do', { accessToken: hundred.key }), { status: 200, text: '100.0' });
    const odd = await createTenant(server, { balance: 212.5 });
    assert.deepEqual(await legacy(server, 'credit.do', { accessToken: odd.key }), { status: 200, text: '212.5' });
    const none = await createTenant(server);
    assert.deepEqual(await legacy(server, 'credit.do', { accessToken: none.key }), { status: 200, text: '0.0' });
    const one = await createTenant(server, { balance: 1 });
    idOf(await legacy(server, 'sendSMS.do', { accessToken: one.key, message: 'x', numero: '33612345678' }));
    const after = await legacy(server, 'credit.do', { accessToken: one.key });
    assert.equal(after.text, '0.955');
    for (const t of ['100.0', '212.5', '0.0', '0.955']) assert.match(t, /^-?\d+\.\d+$/);
    // A POST may carry everything in its query string, with no body.
    const post = await fetch(`${server.url}/http/1.6/credit.do?accessToken=${encodeURIComponent(hundred.key)}`, { method: 'POST' });
    assert.deepEqual([post.status, await post.text()], [200, '100.0']);
  });

  test('smsList.do: the newest sends first, one row each, rows separated by an empty line', async () => {
    const t = await createTenant(server, { balance: 5 });
    const single = idOf(await legacy(server, 'sendSMS.do', { accessToken: t.key, message: 'Premier | envoi', numero: '0612345678' }));
    const group = idOf(await legacy(server, 'sendSMS.do', { accessToken: t.key, message: 'À tous', numero: '33612345671,33612345672,33612345673' }));
    const year = new Date().getUTCFullYear() + 1;
    const later = idOf(
      await legacy(server, 'sendSMS.do', { accessToken: t.key, message: 'Plus tard', numero: '33612345674', date_envoi: `0101${year}-09:30` }),
    );
    const deleted = idOf(await legacy(server, 'sendSMS.do', { accessToken: t.key, message: 'Annulé', numero: '33612345675', date_envoi: `0101${year}-09:30` }));
    assert.match((await legacy(server, 'deleteSMS.do', { accessToken: t.key, smsID: deleted })).text, /^0 \| Deleted/);

    const list = await legacy(server, 'smsList.do', { accessToken: t.key });
    assert.equal(list.status, 200);
    const rows = list.text.split('\n\n');
    assert.equal(rows.length, 3, list.text);
    const message = async (id: string) => (await request(server, 'GET', `/sms/v1/messages/${id}`, { key: t.key })).body;
    const laterRow = `${later} | 01/01/${year} 09:30 | Plus tard | 33612345674 | 0.045 | 1`;
    const members = (await request(server, 'GET', `/sms/v1/messages?searchBy[campaignId]=${group}`, { key: t.key })).body.items;
    const first = members.find((m: any) => m.recipient.to === '33612345671');
    const groupRow = `${group} | ${formatLegacyListDate(Date.parse(first.sentDate), PARIS)} | À tous | 33612345671 | 0.135 | 3`;
    const s = await message(single);
    const singleRow = `${single} | ${formatLegacyListDate(Date.parse(s.sentDate), PARIS)} | Premier / envoi | 33612345678 | 0.045 | 1`;
    assert.deepEqual(rows, [laterRow, groupRow, singleRow]);
    for (const row of rows) assert.equal(row.split(' | ').length, 6);

    assert.deepEqual((await legacy(server, 'smsList.do', { accessToken: t.key, offset: '1' })).text, laterRow);
    const bad = await legacy(server, 'smsList.do', { accessToken: t.key, offset: '0' });
    assert.equal(bad.status, 400);
    assert.match(bad.text, /^35 \| .*offset: must be a whole number from 1 to 1000$/);
    assert.equal((await legacy(server, 'smsList.do', { accessToken: 'nope' })).status, 401);

    // A USER key of another channel of the organisation reads that channel only; the ADMIN key reads both.
    const channel = await request(server, 'POST', `/admin/v1/organisations/${t.organisationId}/channels`, {
      key: server.adminKey,
      body: { name: 'Second', type: 'SMS', flow: 'TRANSACTIONAL' },
    });
    const user = await request(server, 'POST', `/admin/v1/channels/${channel.body.channelId}/credentials`, {
      key: server.adminKey,
      body: { name: 'User', roles: ['USER'] },
    });
    assert.deepEqual(await legacy(server, 'smsList.do', { accessToken: user.body.value }), { status: 200, text: '' });
    const own = idOf(await legacy(server, 'sendSMS.do', { accessToken: user.body.value, message: 'Second', numero: '33612345676' }));
    assert.equal((await legacy(server, 'smsList.do', { accessToken: user.body.value })).text.split(' | ')[0], own);
    assert.equal((await legacy(server, 'smsList.do', { accessToken: t.key })).text.split('\n\n').length, 4);
    // Another organisation reads nothing of this one.
    const stranger = await createTenant(server);
    assert.deepEqual(await legacy(server, 'smsList.do', { accessToken: stranger.key }), { status: 200, text: '' });
  });

  test('responseList.do: replies newest first, by page or by dates, each with the send it answers', async () => {
    const t = await createTenant(server, { balance: 5, channel: { defaultFromField: '36034', fromFieldList: ['36034'] } });
    const smsId = idOf(await legacy(server, 'sendSMS.do', { accessToken: t.key, message: 'Répondez', numero: '33611111111,33622222222', classe_msg: '4' }));
    const texts = ['Oui', 'Non | merci', 'Peut-être'];
    for (const [i, text] of texts.entries()) {
      const mo = await request(server, 'POST', '/admin/v1/simulator/mo', {
        key: server.adminKey,
        body: { from: i === 1 ? '33622222222' : '33611111111', to: '36034', text },
      });
      assert.equal(mo.status, 202, mo.text);
    }
    const inbound = await eventually(
      async () => {
        const r = await request(server, 'GET', '/sms/v1/messages?searchBy[direction]=MO', { key: t.key });
        return r.body.items?.length === 3 ? r.body.items : undefined;
      },
      10_000,
      'three replies stored',
    );
    const all = await legacy(server, 'responseList.do', { accessToken: t.key });
    assert.equal(all.status, 200);
    const lines = all.text.split('\n');
    const expected = inbound.map(
      (m: any) => `${m.messageId} | ${formatLegacyMinute(Date.parse(m.acceptedAt), PARIS)} | ${m.from} | ${m.body.text.replace('|', '/')} | 36034 | ${smsId}`,
    );
    assert.deepEqual(lines, expected);
    assert.deepEqual(
      lines.map((l) => l.split(' | ')[3]),
      ['Peut-être', 'Non / merci', 'Oui'],
    );

    assert.deepEqual((await legacy(server, 'responseList.do', { accessToken: t.key, start: '1', offset: '1' })).text, lines[1]);
    assert.deepEqual((await legacy(server, 'responseList.do', { accessToken: t.key, start: '3' })).text, '');

    const at = Date.parse(inbound[0].acceptedAt);
    const minute = (ms: number) => formatLegacyMinute(ms, PARIS);
    assert.deepEqual(
      (await legacy(server, 'responseList.do', { accessToken: t.key, startDate: minute(at - 3_600_000), endDate: minute(at) })).text.split('\n'),
      lines,
    );
    assert.deepEqual(
      (await legacy(server, 'responseList.do', { accessToken: t.key, startDate: minute(at + 120_000), endDate: minute(at + 3_600_000) })).text,
      '',
    );

    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ startDate: minute(at) }, /endDate: is required with startDate/],
      [{ endDate: minute(at) }, /startDate: is required with endDate/],
      [{ startDate: minute(at), endDate: minute(at), start: '0' }, /not both/],
      [{ startDate: '2024-01-01', endDate: minute(at) }, /startDate: "2024-01-01" must be ddMMyyyy-HH:mm/],
      [{ startDate: minute(at + 3_600_000), endDate: minute(at) }, /startDate: is after endDate/],
      [{ offset: '1001' }, /offset: must be a whole number from 1 to 1000/],
      [{ start: '-1' }, /start: must be a whole number/],
    ];
    for (const [params, detail] of cases) {
      const a = await legacy(server, 'responseList.do', { accessToken: t.key, ...params });
      assert.equal(a.status, 400, a.text);
      assert.match(a.text, /^35 \| Missing or invalid parameter: /);
      assert.match(a.text, detail);
    }
  });

  test('list answers are in the charset asked for: ISO-8859-15 by default, UTF-8 or ISO-8859-1 on request', async () => {
    const t = await createTenant(server, { balance: 5, channel: { defaultFromField: '36035', fromFieldList: ['36035'] } });
    idOf(await legacy(server, 'sendSMS.do', { accessToken: t.key, message: 'Œuvre à 5 €', numero: '33633333333' }));
    const text = 'Confirmé, ça coûte 5 € 🙂';
    const mo = await request(server, 'POST', '/admin/v1/simulator/mo', { key: server.adminKey, body: { from: '33633333333', to: '36035', text } });
    assert.equal(mo.status, 202, mo.text);
    await eventually(
      async () => (await request(server, 'GET', '/sms/v1/messages?searchBy[direction]=MO', { key: t.key })).body.items?.length === 1 || undefined,
      10_000,
      'the reply stored',
    );
    const field = (line: string, i: number) => line.split(' | ')[i];

    // Without a charset: ISO-8859-15 bytes, é as E9 and € as A4; the emoji, which it lacks, as ?.
    const byDefault = await raw(server, 'responseList.do', { accessToken: t.key });
    assert.equal(byDefault.contentType, 'text/plain; charset=ISO-8859-15');
    assert.equal(field(new TextDecoder('iso-8859-15').decode(byDefault.bytes), 3), 'Confirmé, ça coûte 5 € ?');
    assert.ok(byDefault.bytes.includes(Buffer.from([0x72, 0x6d, 0xe9, 0x2c])), 'é is one byte, E9');
    assert.ok(byDefault.bytes.includes(0xa4), '€ is A4');
    assert.ok(!byDefault.bytes.includes(0xc3), 'no UTF-8 sequence');
    const sends = await raw(server, 'smsList.do', { accessToken: t.key });
    assert.equal(sends.contentType, 'text/plain; charset=ISO-8859-15');
    assert.equal(field(new TextDecoder('iso-8859-15').decode(sends.bytes), 2), 'Œuvre à 5 €');
    assert.ok(sends.bytes.includes(0xbc), 'Œ is BC');

    // charset=ISO-8859-15 says the same; charset=UTF-8 answers UTF-8, the emoji included.
    const asked = await raw(server, 'responseList.do', { accessToken: t.key, charset: 'iso-8859-15' });
    assert.equal(asked.contentType, 'text/plain; charset=ISO-8859-15');
    assert.deepEqual(asked.bytes, byDefault.bytes);
    const utf8 = await raw(server, 'responseList.do', { accessToken: t.key, charset: 'UTF-8' });
    assert.equal(utf8.contentType, 'text/plain; charset=utf-8');
    assert.equal(field(utf8.bytes.toString('utf8'), 3), text);
    // ISO-8859-1 has no €: it is answered as ?, and Œ too.
    const latin1 = await raw(server, 'smsList.do', { accessToken: t.key, charset: 'latin1' });
    assert.equal(latin1.contentType, 'text/plain; charset=ISO-8859-1');
    assert.equal(field(latin1.bytes.toString('latin1'), 2), '?uvre à 5 ?');

    // Errors are answered in the charset asked for too; an unknown charset is refused in UTF-8.
    const bad = await raw(server, 'responseList.do', { accessToken: t.key, charset: 'UTF-8', offset: 'é' });
    assert.equal(bad.status, 400);
    assert.equal(bad.contentType, 'text/plain; charset=utf-8');
    const unknown = await raw(server, 'responseList.do', { accessToken: t.key, charset: 'UTF-16' });
    assert.equal(unknown.status, 400);
    assert.equal(unknown.contentType, 'text/plain; charset=utf-8');
    assert.match(unknown.bytes.toString('utf8'), /charset: must be UTF-8, ISO-8859-15 or ISO-8859-1, got "UTF-16"/);
    // The other operations answer UTF-8 unless asked: their answers are ASCII.
    assert.equal((await raw(server, 'credit.do', { accessToken: t.key })).contentType, 'text/plain; charset=utf-8');
    assert.equal((await raw(server, 'credit.do', { accessToken: t.key, charset: 'ISO-8859-15' })).contentType, 'text/plain; charset=ISO-8859-15');
  });
});
