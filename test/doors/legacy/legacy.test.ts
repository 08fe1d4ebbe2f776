import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { formatLegacyReportDate } from '../../../src/doors/legacy/dates.ts';
import { type ReceivedRequest, startReceiver, type Receiver } from '../../support/receiver.ts';
import { createTenant, forEachDialect, request, startTestServer, type Tenant, type TestServer } from '../../support/server.ts';
import { eventually } from '../../support/wait.ts';

interface LegacyAnswer {
  status: number;
  text: string;
  contentType: string | null;
}

/** A legacy call: GET with a query string, or POST with a form. */
async function legacy(server: TestServer, op: string, params: Record<string, string>, method: 'GET' | 'POST' = 'GET'): Promise<LegacyAnswer> {
  const form = new URLSearchParams(params).toString();
  const res =
    method === 'GET'
      ? await fetch(`${server.url}/http/1.6/${op}?${form}`)
      : await fetch(`${server.url}/http/1.6/${op}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form });
  return { status: res.status, text: await res.text(), contentType: res.headers.get('content-type') };
}

function assertLine(a: LegacyAnswer, status: number, pattern: RegExp): void {
  assert.equal(a.status, status, a.text);
  assert.equal(a.contentType, 'text/plain; charset=utf-8');
  assert.match(a.text, pattern);
}

const ID = '([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})';
const ACCEPTED = new RegExp(`^0 \\| Accepted \\| ${ID}$`);

function idOf(a: LegacyAnswer): string {
  const m = ACCEPTED.exec(a.text);
  assert.ok(m, `not an accepted answer: ${a.status} ${a.text}`);
  return m[1]!;
}

async function balance(server: TestServer, orgId: string): Promise<number> {
  return (await request(server, 'GET', `/admin/v1/organisations/${orgId}`, { key: server.adminKey })).body.balance.amount;
}

async function finalSms(server: TestServer, t: Tenant, id: string, type = 'sms'): Promise<any> {
  return eventually(
    async () => {
      const r = await request(server, 'GET', `/${type}/v1/messages/${id}`, { key: t.key });
      return ['ENROUTE', 'SCHEDULED'].includes(r.body.status?.value) ? undefined : r.body;
    },
    15_000,
    `final status of ${id}`,
  );
}

const round6 = (x: number) => Math.round(x * 1e6) / 1e6;

forEachDialect('Legacy HTTP 1.6', (dialect) => {
  let server: TestServer;
  let receiver: Receiver;
  before(async () => {
    receiver = await startReceiver();
    server = await startTestServer(dialect, {
      TERN_SIMULATOR_VOICE_RETRY_MS: '100',
      TERN_WEBHOOK_RETRY_SCHEDULE: '100ms,200ms,300ms',
    });
  });
  after(async () => {
    await server.stop();
    await receiver.close();
  });

  const callbacks = (path: string) => receiver.delivered().filter((r) => r.url.split('?')[0] === path);
  const query = (r: ReceivedRequest) => Object.fromEntries(new URL(r.url, 'http://x').searchParams);

  test('sendSMS.do by GET and POST: 0 | Accepted | smsID, the same message as REST', async () => {
    const t = await createTenant(server, { balance: 1, channel: { defaultFromField: 'ACME', fromFieldList: ['ACME', 'SHOP'] } });
    const get = await legacy(server, 'sendSMS.do', {
      accessToken: t.key,
      message: 'Bonjour {monde}',
      numero: '0612345678',
      emetteur: 'SHOP',
      refClient: 'r-1',
    });
    assertLine(get, 200, ACCEPTED);
    const m = (await request(server, 'GET', `/sms/v1/messages/${idOf(get)}`, { key: t.key })).body;
    assert.equal(m.recipient.to, '33612345678');
    assert.equal(m.from, 'SHOP');
    assert.equal(m.refClient, 'r-1');
    assert.equal(m.body.text, 'Bonjour {monde}');
    assert.equal(m.body.encoding, 'GSM7');
    assert.equal(m.price.amount, 0.045);

    const post = await legacy(server, 'sendSMS.do', { accessToken: t.key, message: 'Grüße 🙂', numero: '+33612345679', classe_msg: '9' }, 'POST');
    assertLine(post, 200, ACCEPTED);
    const u = (await request(server, 'GET', `/sms/v1/messages/${idOf(post)}`, { key: t.key })).body;
    assert.equal(u.recipient.to, '33612345679');
    assert.equal(u.from, 'ACME');
    assert.equal(u.body.encoding, 'UNICODE');
    assert.equal((await finalSms(server, t, u.messageId)).status.value, 'DELIVERED');
    assert.equal(await balance(server, t.organisationId), round6(1 - 2 * 0.045));

    // The JSON routes still refuse forms.
    const form = await fetch(`${server.url}/sms/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-api-key': t.key },
      body: 'message=x',
    });
    assert.equal(form.status, 415);
  });

  test('sendSMS.do: stop, nbr_msg, date_envoi in French local time', async () => {
    const t = await createTenant(server, { balance: 1 });
    const always = await legacy(server, 'sendSMS.do', { accessToken: t.key, message: 'Promo', numero: '33612345678', stop: '2' });
    assert.match((await request(server, 'GET', `/sms/v1/messages/${idOf(always)}`, { key: t.key })).body.body.text, /^Promo\nSTOP au 36111$/);
    const fits = await legacy(server, 'sendSMS.do', { accessToken: t.key, message: 'Promo', numero: '33612345678', stop: '1' });
    assert.equal((await request(server, 'GET', `/sms/v1/messages/${idOf(fits)}`, { key: t.key })).body.body.stop, true);
    const long = 'x'.repeat(155);
    const tooLong = await legacy(server, 'sendSMS.do', { accessToken: t.key, message: long, numero: '33612345678', stop: '1' });
    const noStop = (await request(server, 'GET', `/sms/v1/messages/${idOf(tooLong)}`, { key: t.key })).body;
    assert.equal(noStop.body.text, long, 'stop=1 adds nothing when the mention would make a second SMS');
    assert.equal(noStop.body.messagePartCount, 1);

    assertLine(
      await legacy(server, 'sendSMS.do', { accessToken: t.key, message: 'y'.repeat(400), numero: '33612345678', nbr_msg: '2' }),
      400,
      /^35 \| .*message: needs 3 SMS, more than nbr_msg \(2\)/,
    );
    assertLine(await legacy(server, 'sendSMS.do', { accessToken: t.key, message: 'y'.repeat(400), numero: '33612345678' }), 200, ACCEPTED);

    const year = new Date().getUTCFullYear() + 1;
    const scheduled = await legacy(server, 'sendSMS.do', { accessToken: t.key, message: 'Later', numero: '33612345678', date_envoi: `1507${year}-10:30` });
    const s = (await request(server, 'GET', `/sms/v1/messages/${idOf(scheduled)}`, { key: t.key })).body;
    assert.equal(s.status.value, 'SCHEDULED');
    assert.equal(s.sentDate, `${year}-07-15T08:30:00.000Z`, 'Paris summer time is UTC+2');
    const day = await legacy(server, 'sendSMS.do', { accessToken: t.key, message: 'Later', numero: '33612345678', date_envoi: `1501${year}` });
    assert.equal((await request(server, 'GET', `/sms/v1/messages/${idOf(day)}`, { key: t.key })).body.sentDate, `${year}-01-14T23:00:00.000Z`);
  });

  test('parameter errors: 35 naming the parameter, HTTP 400; authentication errors: 32', async () => {
    const t = await createTenant(server, { balance: 1 });
    const voice = await createTenant(server, { type: 'VOICE', balance: 1 });
    const ok = { accessToken: t.key, message: 'Hello', numero: '33612345678' };
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ ...ok, message: '' }, /message: is required/],
      [{ accessToken: t.key, message: 'x' }, /numero: is required/],
      [{ accessToken: t.key, message: 'x', groupe: 'friends' }, /groupe: no contact group named "friends"/],
      [{ ...ok, numero: 'abc' }, /numero "abc": must be a phone number/],
      [{ ...ok, numero: '33612345678,12' }, /numero\[1\] "12": is too short/],
      [{ ...ok, classe_msg: '3' }, /classe_msg: must be 2, 4 or 9/],
      [{ ...ok, date_envoi: '2030-01-01' }, /date_envoi: "2030-01-01" must be ddMMyyyy-HH:mm or ddMMyyyy/],
      [{ ...ok, date_envoi: '31022030' }, /date_envoi/],
      [{ ...ok, refClient: 'r'.repeat(41) }, /refClient: at most 40 characters/],
      [{ ...ok, emetteur: 'TWELVECHARSX' }, /emetteur: at most 11 characters/],
      [{ ...ok, nbr_msg: '0' }, /nbr_msg: must be a whole number from 1 to 10/],
      [{ ...ok, nbr_msg: 'two' }, /nbr_msg/],
      [{ ...ok, stop: '3' }, /stop: must be 1 or 2/],
      [{ ...ok, notification_url: 'not a url' }, /notification_url: must be an absolute URL/],
      [{ ...ok, notification_url_reponse: 'ftp://x/y' }, /notification_url_reponse: must be an http or https URL/],
      [
        { ...ok, numero: Array.from({ length: 301 }, (_, i) => `336123${String(i).padStart(5, '0')}`).join(',') },
        /numero: at most 300 numbers per GET request/,
      ],
    ];
    for (const [params, detail] of cases) {
      const a = await legacy(server, 'sendSMS.do', params);
      assertLine(a, 400, /^35 \| Missing or invalid parameter: /);
      assert.match(a.text, detail);
    }
    // POST has no 300-number limit.
    const many = Array.from({ length: 301 }, (_, i) => `336123${String(i).padStart(5, '0')}`).join(',');
    assertLine(await legacy(server, 'sendSMS.do', { ...ok, numero: many }, 'POST'), 200, ACCEPTED);

    assertLine(await legacy(server, 'sendSMS.do', { message: 'x', numero: '33612345678' }), 401, /^32 \| Authentication error: accessToken: is required$/);
    assertLine(await legacy(server, 'sendSMS.do', { ...ok, accessToken: 'nope' }), 401, /^32 \| Authentication error: accessToken: unknown API key$/);
    assertLine(
      await legacy(server, 'sendSMS.do', { ...ok, accessToken: voice.key }),
      403,
      /^32 \| .*needs the key of a SMS channel; this key belongs to a VOICE channel/,
    );
    assertLine(await legacy(server, 'sendVoiceMessage.do', { ...ok }), 403, /^32 \| .*needs the key of a VOICE channel; this key belongs to a SMS channel/);
    assertLine(await legacy(server, 'credit.do', {}), 401, /^32 \| /);
    const unknownOp = await fetch(`${server.url}/http/1.6/nothing.do`);
    assert.equal(unknownOp.status, 404);
  });

  test('insufficient credit: 33 | … with the smsID, HTTP 409, nothing charged', async () => {
    const poor = await createTenant(server, { balance: 0.01 });
    const a = await legacy(server, 'sendSMS.do', { accessToken: poor.key, message: 'x', numero: '33612345678' });
    assertLine(a, 409, new RegExp(`^33 \\| Insufficient credit: .* \\| ${ID}$`));
    const id = a.text.split(' | ')[2]!;
    const m = (await request(server, 'GET', `/sms/v1/messages/${id}`, { key: poor.key })).body;
    assert.deepEqual([m.status.value, m.status.detail], ['UNDELIVERABLE', 'INSUFFICIENT_CREDIT']);
    assert.equal(await balance(server, poor.organisationId), 0.01);
    assertLine(await legacy(server, 'smsStatus.do', { accessToken: poor.key, smsID: id }), 200, /^33 \| No credit$/);
  });

  test('several numbers: one smsID; smsStatus.do overall; compteRendu.do per number', async () => {
    const t = await createTenant(server, { balance: 1 });
    const a = await legacy(server, 'sendSMS.do', { accessToken: t.key, message: 'Hi all', numero: '0612345678, 33612340001,+33612340002' });
    const smsId = idOf(a);
    const campaign = await request(server, 'GET', `/sms/v1/campaigns/${smsId}`, { key: t.key });
    assert.equal(campaign.status, 200, 'the send is a campaign');
    assert.equal(campaign.body.recipients, 3);
    const report = await eventually(
      async () => {
        const r = await legacy(server, 'compteRendu.do', { accessToken: t.key, smsID: smsId });
        return /\b13\b/.test(r.text) ? undefined : r;
      },
      15_000,
      'final report',
    );
    assertLine(report, 200, /^\d+ \d+( \| \d+ \d+)*$/);
    assert.equal(report.text, '33612345678 11 | 33612340001 50 | 33612340002 22');
    assertLine(await legacy(server, 'smsStatus.do', { accessToken: t.key, smsID: smsId }), 200, /^12 \| Partially delivered$/);

    const single = idOf(await legacy(server, 'sendSMS.do', { accessToken: t.key, message: 'One', numero: '33612345678' }));
    await finalSms(server, t, single);
    assertLine(await legacy(server, 'smsStatus.do', { accessToken: t.key, smsID: single }), 200, /^11 \| Received$/);
    assertLine(await legacy(server, 'compteRendu.do', { accessToken: t.key, smsID: single }), 200, /^33612345678 11$/);

    assertLine(await legacy(server, 'smsStatus.do', { accessToken: t.key }), 400, /^35 \| .*smsID: is required/);
    assertLine(await legacy(server, 'smsStatus.do', { accessToken: t.key, smsID: 'nope' }), 404, /^61 \| SMS not found/);
    assertLine(await legacy(server, 'compteRendu.do', { accessToken: t.key, smsID: '01a1fd25-5b3b-7388-966d-2f06744df7f6' }), 404, /^61 \| SMS not found/);
    const other = await createTenant(server, { balance: 1 });
    assertLine(await legacy(server, 'smsStatus.do', { accessToken: other.key, smsID: single }), 404, /^61 \| /);
  });

  test('deleteSMS.do deletes a scheduled send and refunds it; a sent one cannot be deleted', async () => {
    const t = await createTenant(server, { balance: 1 });
    const year = new Date().getUTCFullYear() + 1;
    const id = idOf(await legacy(server, 'sendSMS.do', { accessToken: t.key, message: 'Later', numero: '33612345678', date_envoi: `0101${year}-09:00` }));
    assertLine(await legacy(server, 'smsStatus.do', { accessToken: t.key, smsID: id }), 200, /^10 \| Scheduled$/);
    assert.equal(await balance(server, t.organisationId), round6(1 - 0.045));
    assertLine(await legacy(server, 'deleteSMS.do', { accessToken: t.key, smsID: id }), 200, new RegExp(`^0 \\| Deleted \\| ${id}$`));
    assert.equal(await balance(server, t.organisationId), 1);
    assert.equal((await request(server, 'GET', `/sms/v1/messages/${id}`, { key: t.key })).body.status.value, 'CANCELLED');
    assertLine(await legacy(server, 'smsStatus.do', { accessToken: t.key, smsID: id }), 404, /^61 \| SMS not found/);
    assertLine(await legacy(server, 'deleteSMS.do', { accessToken: t.key, smsID: id }), 409, /^35 \| .*smsID: .* is not scheduled/);

    const group = idOf(
      await legacy(server, 'sendSMS.do', { accessToken: t.key, message: 'Later', numero: '33612345678,33612345679', date_envoi: `0101${year}` }),
    );
    assertLine(await legacy(server, 'deleteSMS.do', { accessToken: t.key, smsID: group }, 'POST'), 200, /^0 \| Deleted/);
    assert.equal(await balance(server, t.organisationId), 1);

    const sent = idOf(await legacy(server, 'sendSMS.do', { accessToken: t.key, message: 'Now', numero: '33612345678' }));
    await finalSms(server, t, sent);
    assertLine(await legacy(server, 'deleteSMS.do', { accessToken: t.key, smsID: sent }), 409, /^35 \| /);
  });

  test('credit.do answers the bare balance; creditTransfert.do goes through the transfer service', async () => {
    const parent = await createTenant(server, { balance: 25.5, name: 'Parent' });
    const child = await createTenant(server, { balance: 0, name: 'Child', parentOrganisationId: parent.organisationId });
    const stranger = await createTenant(server, { balance: 5, name: 'Stranger' });
    assertLine(await legacy(server, 'credit.do', { accessToken: parent.key }), 200, /^25\.5$/);
    assertLine(await legacy(server, 'credit.do', { accessToken: child.key }, 'POST'), 200, /^0\.0$/);

    const done = await legacy(server, 'creditTransfert.do', {
      accessToken: parent.key,
      targetPseudo: child.organisationId,
      creditAmount: '10',
      reference: 'monthly',
    });
    const m = new RegExp(`^0 \\| Transfer done \\| ${ID}$`).exec(done.text);
    assert.ok(m, done.text);
    assertLine(await legacy(server, 'credit.do', { accessToken: parent.key }), 200, /^15\.5$/);
    assertLine(await legacy(server, 'credit.do', { accessToken: child.key }), 200, /^10\.0$/);
    const rest = await request(server, 'GET', `/commons/v1/organisations/${parent.organisationId}/transfers/${m[1]}`, { key: parent.key });
    assert.equal(rest.status, 200, rest.text);
    assert.equal(rest.body.amount, 10);
    assert.equal(rest.body.reference, 'monthly');
    assert.equal(rest.body.organisationDestination.organisationId, child.organisationId);

    assertLine(
      await legacy(server, 'creditTransfert.do', { accessToken: parent.key, targetPseudo: child.organisationId, creditAmount: '16' }),
      409,
      /^33 \| Insufficient credit/,
    );
    assertLine(
      await legacy(server, 'creditTransfert.do', { accessToken: parent.key, targetPseudo: stranger.organisationId, creditAmount: '1' }),
      404,
      /^41 \| /,
    );
    assertLine(
      await legacy(server, 'creditTransfert.do', { accessToken: parent.key, targetPseudo: 'nobody', creditAmount: '1' }),
      404,
      /^41 \| .*targetPseudo/,
    );
    assertLine(
      await legacy(server, 'creditTransfert.do', { accessToken: parent.key, targetPseudo: child.organisationId, creditAmount: '1.5' }),
      400,
      /^35 \| .*creditAmount: must be a whole positive number/,
    );
    assertLine(
      await legacy(server, 'creditTransfert.do', { accessToken: parent.key, targetPseudo: child.organisationId }),
      400,
      /^35 \| .*creditAmount: is required/,
    );
    assertLine(await legacy(server, 'creditTransfert.do', { accessToken: parent.key, creditAmount: '1' }), 400, /^35 \| .*targetPseudo: is required/);
    const user = await createTenant(server, { balance: 5, roles: ['USER'] });
    assertLine(await legacy(server, 'creditTransfert.do', { accessToken: user.key, targetPseudo: child.organisationId, creditAmount: '1' }), 403, /^32 \| /);
    assertLine(await legacy(server, 'credit.do', { accessToken: parent.key }), 200, /^15\.5$/);
  });

  test('SMS callbacks: GET to notification_url with the legacy fields, retried like JSON webhooks; replies to notification_url_reponse', async () => {
    const t = await createTenant(server, { balance: 1, channel: { defaultFromField: '36034', fromFieldList: ['36034'] } });
    let failFirst = true;
    receiver.respond = (r) => {
      if (r.url.startsWith('/sms-dlr') && query(r).numero === '33612345678' && failFirst) {
        failFirst = false;
        return 500;
      }
      return 200;
    };
    const ids = new Map<string, string>();
    for (const numero of ['33612345678', '33612340001', '33612340002']) {
      ids.set(
        numero,
        idOf(
          await legacy(server, 'sendSMS.do', {
            accessToken: t.key,
            message: 'Status please',
            numero,
            refClient: `ref-${numero}`,
            classe_msg: '4',
            notification_url: `${receiver.url}/sms-dlr?secret=abc`,
            notification_url_reponse: `${receiver.url}/sms-mo`,
          }),
        ),
      );
    }
    const got = await eventually(
      async () => {
        const c = callbacks('/sms-dlr');
        return c.length >= 3 ? c : undefined;
      },
      15_000,
      'three delivery callbacks',
    );
    const byNumber = new Map(got.map((r) => [query(r).numero, r]));
    const expected: Record<string, string> = { '33612345678': '11', '33612340001': '50', '33612340002': '22' };
    for (const [numero, statut] of Object.entries(expected)) {
      const r = byNumber.get(numero)!;
      assert.equal(r.method, 'GET');
      const q = query(r);
      assert.equal(q.secret, 'abc', 'the URL keeps its own parameters');
      assert.equal(q.statut, statut, numero);
      assert.equal(q.smsID, ids.get(numero));
      assert.equal(q.refClient, `ref-${numero}`);
      assert.match(q.date_reception!, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
      const m = (await request(server, 'GET', `/sms/v1/messages/${ids.get(numero)}`, { key: t.key })).body;
      assert.equal(q.cost, String(m.price.amount));
      assert.equal(q.date_reception, formatLegacyReportDate(Date.parse(m.status.deliveryDate)));
      assert.equal(q.mcc_mnc, m.status.lookup?.mccMnc ?? '');
    }
    // The failed first attempt was retried with the same request.
    const attempts = receiver.requests.filter((r) => r.url.startsWith('/sms-dlr') && query(r).numero === '33612345678');
    assert.equal(attempts.length, 2);
    assert.equal(attempts[0]!.url, attempts[1]!.url);
    // No JSON webhook for these messages.
    assert.equal(receiver.requests.filter((r) => r.method === 'POST').length, 0);

    // A reply from the first number: GET to notification_url_reponse.
    const mo = await request(server, 'POST', '/admin/v1/simulator/mo', { key: server.adminKey, body: { from: '33612345678', to: '36034', text: 'Oui merci' } });
    assert.equal(mo.status, 202, mo.text);
    const reply = await eventually(async () => callbacks('/sms-mo')[0], 10_000, 'reply callback');
    const q = query(reply);
    assert.equal(reply.method, 'GET');
    assert.equal(q.numero, '36034');
    assert.equal(q.emetteur, '33612345678');
    assert.equal(q.message, 'Oui merci');
    assert.equal(q.smsID, ids.get('33612345678'));
    assert.equal(q.refClient, 'ref-33612345678');
    assert.match(q.date_reception!, /^\d{8}-\d{6}$/);
    assert.match(q.responseID!, new RegExp(`^${ID}$`));
  });

  test('sendVoiceMessage.do: accepted, rendered in the language, each call outcome reaches its status and its legacy callback', async () => {
    const t = await createTenant(server, { type: 'VOICE', balance: 2 });
    const outcomes: Record<string, { status: string; detail: string | null; statut: string }> = {
      '0612345678': { status: 'DELIVERED', detail: null, statut: '16' },
      '0612340001': { status: 'UNDELIVERED', detail: 'BUSY', statut: '50' },
      '+33612340002': { status: 'UNDELIVERED', detail: 'NO_ANSWER', statut: '50' },
      '33612340003': { status: 'UNDELIVERABLE', detail: 'INVALID_PHONE_NUMBER', statut: '3998' },
    };
    const ids = new Map<string, string>();
    for (const numero of Object.keys(outcomes)) {
      const a = await legacy(
        server,
        'sendVoiceMessage.do',
        {
          accessToken: t.key,
          message: 'Your appointment is tomorrow at ten.',
          numero,
          title: 'Clinic',
          language: 'en-GB',
          refClient: 'v-1',
          notification_url: `${receiver.url}/voice-dlr`,
        },
        numero === '0612340001' ? 'POST' : 'GET',
      );
      assertLine(a, 200, ACCEPTED);
      ids.set(numero, idOf(a));
    }
    for (const [numero, o] of Object.entries(outcomes)) {
      const m = await finalSms(server, t, ids.get(numero)!, 'voice');
      assert.equal(m.type, 'VOICE');
      assert.deepEqual(m.body, { text: 'Your appointment is tomorrow at ten.', title: 'Clinic', language: 'en-GB' });
      assert.deepEqual([m.status.value, m.status.detail ?? null], [o.status, o.detail], numero);
      assert.equal(m.price.amount, o.status === 'DELIVERED' ? 0.035 : 0, `${numero}: only the answered call is paid`);
      const audio = await fetch(`${server.url}/voice/v1/messages/${m.messageId}/audio`, { headers: { 'x-api-key': t.key } });
      assert.equal(audio.status, 200);
      assertLine(await legacy(server, 'smsStatus.do', { accessToken: t.key, smsID: m.messageId }), 200, new RegExp(`^${o.statut} \\| `));
    }
    const got = await eventually(async () => (callbacks('/voice-dlr').length >= 4 ? callbacks('/voice-dlr') : undefined), 15_000, 'voice callbacks');
    for (const [numero, o] of Object.entries(outcomes)) {
      const r = got.find((g) => query(g).smsID === ids.get(numero));
      assert.ok(r, `callback for ${numero}`);
      const q = query(r);
      assert.equal(q.statut, o.statut, numero);
      assert.equal(q.refClient, 'v-1');
      assert.equal(q.cost, o.status === 'DELIVERED' ? '0.035' : '0');
      assert.match(q.numero!, /^336123/);
    }
    assert.equal(await balance(server, t.organisationId), round6(2 - 0.035));

    // Several numbers, a date: one smsID, scheduled.
    const year = new Date().getUTCFullYear() + 1;
    const group = await legacy(server, 'sendVoiceMessage.do', {
      accessToken: t.key,
      message: 'Bonjour',
      numero: '0612345678,0612345679',
      date_envoi: `0201${year}`,
    });
    const groupId = idOf(group);
    assertLine(await legacy(server, 'smsStatus.do', { accessToken: t.key, smsID: groupId }), 200, /^10 \| Scheduled$/);
    assertLine(await legacy(server, 'compteRendu.do', { accessToken: t.key, smsID: groupId }), 200, /^33612345678 10 \| 33612345679 10$/);
    const members = await request(server, 'GET', `/voice/v1/messages?searchBy[campaignId]=${groupId}`, { key: t.key });
    assert.equal(members.body.items.length, 2);
    for (const item of members.body.items) {
      assert.equal(item.body.language, 'fr-FR');
      assert.equal(item.sentDate, `${year}-01-01T23:00:00.000Z`);
    }
    assertLine(await legacy(server, 'deleteSMS.do', { accessToken: t.key, smsID: groupId }), 200, /^0 \| Deleted/);
    assert.equal(await balance(server, t.organisationId), round6(2 - 0.035));
  });

  test('sendVoiceMessage.do parameter errors name the parameter', async () => {
    const t = await createTenant(server, { type: 'VOICE', balance: 1 });
    const ok = { accessToken: t.key, message: 'Bonjour', numero: '0612345678' };
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ ...ok, message: '' }, /message: is required/],
      [{ ...ok, message: 'x'.repeat(161) }, /message: at most 160 characters, got 161/],
      [{ ...ok, language: 'ja-JP' }, /language: must be one of fr-FR, en-GB, de-DE, es-ES, it-IT, pt-PT, nl-NL/],
      [{ ...ok, title: 't'.repeat(161) }, /title: at most 160 characters/],
      [{ accessToken: t.key, message: 'x' }, /numero: is required/],
      [{ ...ok, numero: '06123' }, /numero "06123": is too short/],
      [{ ...ok, date_envoi: '1/1/2030' }, /date_envoi/],
      [{ ...ok, refClient: 'r'.repeat(41) }, /refClient: at most 40 characters/],
      [{ ...ok, notification_url: 'mailto:x@y' }, /notification_url: must be an http or https URL/],
    ];
    for (const [params, detail] of cases) {
      const a = await legacy(server, 'sendVoiceMessage.do', params, 'POST');
      assertLine(a, 400, /^35 \| Missing or invalid parameter: /);
      assert.match(a.text, detail);
    }
    assert.equal(await balance(server, t.organisationId), 1);
    const poor = await createTenant(server, { type: 'VOICE', balance: 0.01 });
    assertLine(await legacy(server, 'sendVoiceMessage.do', { ...ok, accessToken: poor.key }), 409, /^33 \| Insufficient credit/);
  });
});
