import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createTenant, forEachDialect, request, startTestServer, type Tenant, type TestServer } from '../../support/server.ts';

const ID = /^0 \| Accepted \| ([0-9a-f-]{36})$/;

/**
 * The exact bytes a client sends: `query` and `form` are already percent-encoded (`caf%E9`), as PHP's libraries write
 * ISO-8859-15 text.
 */
async function call(server: TestServer, op: string, query: string, form?: { body: string; contentType?: string }) {
  const res = form
    ? await fetch(`${server.url}/http/1.6/${op}?${query}`, {
        method: 'POST',
        headers: { 'content-type': form.contentType ?? 'application/x-www-form-urlencoded' },
        body: form.body,
      })
    : await fetch(`${server.url}/http/1.6/${op}?${query}`);
  return { status: res.status, text: await res.text() };
}

forEachDialect('Legacy HTTP 1.6: ISO-8859-15 and UTF-8 text', (dialect) => {
  let server: TestServer;
  let sms: Tenant;
  let voice: Tenant;
  before(async () => {
    server = await startTestServer(dialect);
    sms = await createTenant(server, { balance: 10 });
    voice = await createTenant(server, { balance: 10, type: 'VOICE' });
  });
  after(() => server.stop());

  const token = () => `accessToken=${encodeURIComponent(sms.key)}`;

  /** Sends, and answers the stored message as REST shows it. */
  async function sent(query: string, form?: { body: string; contentType?: string }, type = 'sms', tenant = sms): Promise<any> {
    const a = await call(server, type === 'voice' ? 'sendVoiceMessage.do' : 'sendSMS.do', query, form);
    const m = ID.exec(a.text);
    assert.ok(m, `${a.status} ${a.text}`);
    const r = await request(server, 'GET', `/${type}/v1/messages/${m[1]}`, { key: tenant.key });
    assert.equal(r.status, 200, r.text);
    return r.body;
  }

  test('sendSMS.do by GET: caf%E9 is ISO-8859-15 "café"; caf%C3%A9 is UTF-8 "café"; %A4 is "€"', async () => {
    const iso = await sent(`${token()}&message=caf%E9&numero=33612345678`);
    assert.equal(iso.body.text, 'café');
    assert.equal(iso.body.encoding, 'GSM7');
    assert.equal((await sent(`${token()}&message=caf%C3%A9&numero=33612345678`)).body.text, 'café');
    assert.equal((await sent(`${token()}&message=Prix+%3A+10%A4&numero=33612345678`)).body.text, 'Prix : 10€');
    // The eight positions where ISO-8859-15 is not Latin-1.
    assert.equal((await sent(`${token()}&message=%A4%A6%A8%B4%B8%BC%BD%BE&numero=33612345678`)).body.text, '€ŠšŽžŒœŸ');
    // The manual's own table gives %80 for € too.
    assert.equal((await sent(`${token()}&message=10%80&numero=33612345678`)).body.text, '10€');
  });

  test('sendSMS.do by POST form: the body is read the same way, every parameter, not only the message', async () => {
    const m = await sent('', { body: `${token()}&message=Bient%F4t+chez+vous&numero=33612345678&emetteur=Soci%E9t%E9&refClient=r%E9f%A4` });
    assert.equal(m.body.text, 'Bientôt chez vous');
    assert.equal(m.from, 'Société');
    assert.equal(m.refClient, 'réf€');
    const utf8 = await sent('', { body: `${token()}&message=Gr%C3%BC%C3%9Fe+%E2%82%AC&numero=33612345678` });
    assert.equal(utf8.body.text, 'Grüße €');
    // Query string and form together: the form's field wins.
    const both = await sent(`message=ignored&numero=33612345678`, { body: `${token()}&message=%C9t%E9` });
    assert.equal(both.body.text, 'Été');
    // Parameters of any name, repeated or not, are only parameters.
    const odd = await sent(`${token()}&message=ok&numero=33612345678&toString=a&toString=b&__proto__=x&constructor=y`, {
      body: 'hasOwnProperty=z&__proto__=w',
    });
    assert.equal(odd.body.text, 'ok');
  });

  test('classe_msg=9 is UTF-8 (the manual’s %E2%98%BA is ☺); ISO-8859-15 bytes with it are refused, naming the parameter', async () => {
    const smiley = await sent(`${token()}&classe_msg=9&message=%E2%98%BA&emetteur=PERSO&numero=33612345678`);
    assert.equal(smiley.body.text, '☺');
    assert.equal(smiley.body.encoding, 'UNICODE');
    assert.equal(smiley.from, 'PERSO');
    // classe_msg in the query string, the text in the form.
    assert.equal((await sent(`${token()}&classe_msg=9`, { body: 'message=%F0%9F%98%80&numero=33612345678' })).body.text, '😀');
    const bad = await call(server, 'sendSMS.do', `${token()}&classe_msg=9&message=caf%E9&numero=33612345678`);
    assert.equal(bad.status, 400);
    assert.equal(bad.text, '35 | Missing or invalid parameter: message: is not valid UTF-8 (classe_msg=9 is Unicode text, sent in UTF-8)');
  });

  test('a charset parameter or a form’s Content-Type charset says how to read the bytes', async () => {
    assert.equal((await sent(`${token()}&charset=UTF-8&message=caf%C3%A9&numero=33612345678`)).body.text, 'café');
    assert.equal((await sent(`${token()}&charset=ISO-8859-15&message=caf%C3%A9&numero=33612345678`)).body.text, 'cafÃ©');
    assert.equal((await sent(`${token()}&charset=ISO-8859-1&message=%A4&numero=33612345678`)).body.text, '¤');
    const refused = await call(server, 'sendSMS.do', `${token()}&charset=utf-8&message=caf%E9&numero=33612345678`);
    assert.equal(refused.status, 400);
    assert.match(refused.text, /^35 \| Missing or invalid parameter: message: is not valid UTF-8 \(charset=utf-8\)$/);
    const unknown = await call(server, 'sendSMS.do', `${token()}&charset=UTF-16&message=x&numero=33612345678`);
    assert.equal(unknown.status, 400);
    assert.match(unknown.text, /^35 \| .*charset: must be UTF-8, ISO-8859-15 or ISO-8859-1, got "UTF-16"$/);
    const declared = await call(server, 'sendSMS.do', '', {
      body: `${token()}&message=caf%E9&numero=33612345678`,
      contentType: 'application/x-www-form-urlencoded; charset=UTF-8',
    });
    assert.equal(declared.status, 400);
    assert.match(declared.text, /^35 \| .*message: is not valid UTF-8 \(the Content-Type says UTF-8\)$/);
    const latin = await sent('', {
      body: `${token()}&message=caf%E9&numero=33612345678`,
      contentType: 'application/x-www-form-urlencoded; charset=ISO-8859-15',
    });
    assert.equal(latin.body.text, 'café');
  });

  test('text no database can keep is refused before anything is stored', async () => {
    const before = (await request(server, 'GET', '/sms/v1/messages', { key: sms.key })).body.items.length;
    const nul = await call(server, 'sendSMS.do', `${token()}&message=a%00b&numero=33612345678`);
    assert.equal(nul.status, 400);
    assert.match(nul.text, /^35 \| .*message: must not contain the NUL character/);
    const form = await call(server, 'sendSMS.do', '', { body: `${token()}&message=ok&numero=33612345678&emetteur=A%00` });
    assert.equal(form.status, 400);
    assert.match(form.text, /^35 \| .*emetteur: must not contain the NUL character/);
    assert.equal((await request(server, 'GET', '/sms/v1/messages', { key: sms.key })).body.items.length, before);
  });

  test('sendVoiceMessage.do reads its text the same way', async () => {
    const vt = `accessToken=${encodeURIComponent(voice.key)}`;
    const iso = await sent(`${vt}&message=Votre+rendez-vous+est+confirm%E9&title=Cabinet+m%E9dical&numero=33612345678`, undefined, 'voice', voice);
    assert.equal(iso.body.text, 'Votre rendez-vous est confirmé');
    assert.equal(iso.body.title, 'Cabinet médical');
    const utf8 = await sent('', { body: `${vt}&message=Gr%C3%BC%C3%9F+Gott&language=de-DE&numero=33612345678` }, 'voice', voice);
    assert.equal(utf8.body.text, 'Grüß Gott');
  });
});
