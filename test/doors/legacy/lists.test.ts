import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { formatLegacyListDate, formatLegacyMinute } from '../../../src/doors/legacy/dates.ts';
import { createTenant, forEachDialect, request, startTestServer, type Tenant, type TestServer } from '../../support/server.ts';
import { eventually } from '../../support/wait.ts';

async function legacy(server: TestServer, op: string, params: Record<string, string>): Promise<{ status: number; text: string }> {
  const res = await fetch(`${server.url}/http/1.6/${op}?${new URLSearchParams(params)}`);
  assert.equal(res.headers.get('content-type'), 'text/plain; charset=utf-8');
  return { status: res.status, text: await res.text() };
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
    const later = idOf(await legacy(server, 'sendSMS.do', { accessToken: t.key, message: 'Plus tard', numero: '33612345674', date_envoi: `0101${year}-09:30` }));
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
    const channel = await request(server, 'POST', `/admin/v1/organisations/${t.organisationId}/channels`, { key: server.adminKey, body: { name: 'Second', type: 'SMS', flow: 'TRANSACTIONAL' } });
    const user = await request(server, 'POST', `/admin/v1/channels/${channel.body.channelId}/credentials`, { key: server.adminKey, body: { name: 'User', roles: ['USER'] } });
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
    assert.deepEqual((await legacy(server, 'responseList.do', { accessToken: t.key, startDate: minute(at + 120_000), endDate: minute(at + 3_600_000) })).text, '');

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
});
