import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { formatLegacyDay } from '../../../src/doors/legacy/dates.ts';
import { createTenant, forEachDialect, request, startTestServer, type TestServer } from '../../support/server.ts';

interface Answer {
  status: number;
  text: string;
  contentType: string | null;
}

/** A legacy call by GET; `query` is already percent-encoded (the exact bytes a client sends). */
async function raw(server: TestServer, path: string, query: string, method: 'GET' | 'POST' = 'GET'): Promise<Answer> {
  const res =
    method === 'GET'
      ? await fetch(`${server.url}${path}?${query}`)
      : await fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: query });
  return { status: res.status, text: await res.text(), contentType: res.headers.get('content-type') };
}

const legacy = (server: TestServer, op: string, params: Record<string, string>, method: 'GET' | 'POST' = 'GET') =>
  raw(server, `/http/1.6/${op}`, new URLSearchParams(params).toString(), method);

const ID = '([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})';

function idIn(a: Answer, line: string): string {
  const m = new RegExp(`^0 \\| ${line} \\| ${ID}$`).exec(a.text);
  assert.ok(m, `${a.status} ${a.text}`);
  return m[1]!;
}

forEachDialect('Legacy HTTP 1.6: sub-accounts, API keys, contacts', (dialect) => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer(dialect);
  });
  after(() => server.stop());

  const organisation = async (id: string) => (await request(server, 'GET', `/admin/v1/organisations/${id}`, { key: server.adminKey })).body;

  test('createSubAccount.do: a sub-organisation with a login; pseudo and pass work as its ADMIN key; creditTransfert.do names it', async () => {
    const parent = await createTenant(server, { balance: 20, name: 'Parent' });
    const created = await raw(
      server,
      '/http/1.6/createSubAccount.do',
      `accessToken=${encodeURIComponent(parent.key)}&newPseudo=client-1&newPass=s3cret-pass&societe=Soci%E9t%E9+Dupr%E9&email=a%40b.fr&date=31121980`,
    );
    assert.equal(created.contentType, 'text/plain; charset=utf-8');
    const subId = idIn(created, 'Sub-account created');
    const sub = await organisation(subId);
    assert.equal(sub.name, 'Société Dupré');
    assert.equal(sub.parentOrganisationId, parent.organisationId);

    // The login is unique whatever its case: 41, HTTP 409.
    const taken = await legacy(server, 'createSubAccount.do', { accessToken: parent.key, newPseudo: 'CLIENT-1', newPass: 'another-pass' });
    assert.equal(taken.status, 409);
    assert.equal(taken.text, '41 | Login already taken: newPseudo: the login "CLIENT-1" is already taken');

    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ newPass: 'long-enough' }, /newPseudo: is required/],
      [{ newPseudo: 'x' }, /newPass: is required/],
      [{ newPseudo: 'with space', newPass: 'long-enough' }, /newPseudo: 1 to 50 characters, no spaces/],
      [{ newPseudo: 'y'.repeat(51), newPass: 'long-enough' }, /newPseudo: 1 to 50 characters/],
      [{ newPseudo: 'short', newPass: 'short' }, /newPass: 8 to 128 characters/],
      [{ newPseudo: 'dated', newPass: 'long-enough', date: '31021980' }, /date: "31021980" must be a date written ddMMyyyy/],
      [{ newPseudo: 'named', newPass: 'long-enough', nom: 'n'.repeat(201) }, /nom: at most 200 characters/],
    ];
    for (const [params, detail] of cases) {
      const a = await legacy(server, 'createSubAccount.do', { accessToken: parent.key, ...params });
      assert.equal(a.status, 400, a.text);
      assert.match(a.text, /^35 \| Missing or invalid parameter: /);
      assert.match(a.text, detail);
    }
    const user = await createTenant(server, { roles: ['USER'] });
    assert.match((await legacy(server, 'createSubAccount.do', { accessToken: user.key, newPseudo: 'nope', newPass: 'long-enough' })).text, /^32 \| /);

    // pseudo + pass, by GET and by POST; a wrong pass is an authentication error.
    assert.deepEqual([(await legacy(server, 'credit.do', { pseudo: 'client-1', pass: 's3cret-pass' })).text], ['0.0']);
    assert.equal((await legacy(server, 'credit.do', { pseudo: 'Client-1', pass: 's3cret-pass' }, 'POST')).text, '0.0');
    const wrong = await legacy(server, 'credit.do', { pseudo: 'client-1', pass: 'wrong-pass' });
    assert.equal(wrong.status, 401);
    assert.equal(wrong.text, '32 | Authentication error: pseudo: unknown login or wrong password');
    assert.match((await legacy(server, 'credit.do', { pseudo: 'client-1' })).text, /^32 \| .*pass: is required with pseudo$/);
    assert.match((await legacy(server, 'credit.do', { pseudo: 'nobody', pass: 's3cret-pass' })).text, /^32 \| .*unknown login or wrong password$/);

    // Credit goes to the sub-account by its login, and it spends it.
    const transfer = await legacy(server, 'creditTransfert.do', { accessToken: parent.key, targetPseudo: 'client-1', creditAmount: '5' });
    idIn(transfer, 'Transfer done');
    assert.equal((await legacy(server, 'credit.do', { pseudo: 'client-1', pass: 's3cret-pass' })).text, '5.0');
    assert.equal((await legacy(server, 'credit.do', { accessToken: parent.key })).text, '15.0');
    const sms = await legacy(server, 'sendSMS.do', { pseudo: 'client-1', pass: 's3cret-pass', message: 'Depuis le sous-compte', numero: '0612345678' });
    const smsId = idIn(sms, 'Accepted');
    assert.equal((await legacy(server, 'credit.do', { pseudo: 'client-1', pass: 's3cret-pass' })).text, '4.955');
    assert.match((await legacy(server, 'smsStatus.do', { pseudo: 'client-1', pass: 's3cret-pass', smsID: smsId })).text, /^\d+ \| /);
    assert.match(
      (await legacy(server, 'creditTransfert.do', { accessToken: parent.key, targetPseudo: 'someone-else', creditAmount: '1' })).text,
      /^41 \| .*targetPseudo: no account someone-else$/,
    );
  });

  test('createAuthorisation.do: a JSON key on the caller’s channel that works as accessToken and on REST; JSON errors', async () => {
    const t = await createTenant(server, { balance: 3 });
    const res = await fetch(`${server.url}/http/2.0/createAuthorisation.do?accessToken=${encodeURIComponent(t.key)}`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    const body: any = await res.json();
    assert.deepEqual(Object.keys(body).sort(), ['accessToken', 'account', 'creationDate', 'expiration', 'id', 'state']);
    assert.equal(body.account, t.organisationId);
    assert.equal(body.state, 'ACTIVE');
    assert.equal(body.expiration, '');
    assert.equal(body.creationDate, formatLegacyDay(Date.now(), 'Europe/Paris'));
    assert.match(body.creationDate, /^\d{8}$/);
    assert.equal((await legacy(server, 'credit.do', { accessToken: body.accessToken })).text, '3.0');
    const rest = await request(server, 'GET', '/sms/v1/messages', { key: body.accessToken });
    assert.equal(rest.status, 200, rest.text);
    const credentials = await request(server, 'GET', `/admin/v1/channels/${t.channelId}/credentials`, { key: server.adminKey });
    const minted = credentials.body.items.find((c: any) => c.credentialId === body.id);
    assert.ok(minted, credentials.text);
    assert.deepEqual(minted.roles, ['ADMIN']);

    // By POST and with a sub-account's login (username, as the 2.7 manual writes it): the account is its login.
    await legacy(server, 'createSubAccount.do', { accessToken: t.key, newPseudo: 'keyed', newPass: 'keyed-pass' });
    const byLogin = await raw(server, '/http/2.0/createAuthorisation.do', 'username=keyed&pass=keyed-pass', 'POST');
    assert.equal(byLogin.status, 200, byLogin.text);
    assert.equal(JSON.parse(byLogin.text).account, 'keyed');

    const missing = await raw(server, '/http/2.0/createAuthorisation.do', '');
    assert.equal(missing.status, 401);
    assert.match(missing.contentType ?? '', /^application\/json/);
    assert.deepEqual(JSON.parse(missing.text), { code: 32, description: 'Authentication error: accessToken: is required' });
    const user = await createTenant(server, { roles: ['USER'] });
    const forbidden = await raw(server, '/http/2.0/createAuthorisation.do', `accessToken=${encodeURIComponent(user.key)}`);
    assert.equal(forbidden.status, 403);
    assert.equal(JSON.parse(forbidden.text).code, 32);
    const badCharset = await raw(server, '/http/2.0/createAuthorisation.do', `accessToken=${encodeURIComponent(t.key)}&charset=ebcdic`);
    assert.equal(badCharset.status, 400);
    assert.equal(JSON.parse(badCharset.text).code, 35);
  });

  test('deleteSubAccount.do: keys, login and SMPP stop working, the balance goes back to the parent, the login is free again', async () => {
    const parent = await createTenant(server, { balance: 10, name: 'Parent' });
    const subId = idIn(
      await legacy(server, 'createSubAccount.do', { accessToken: parent.key, newPseudo: 'leaving', newPass: 'leaving-pass' }),
      'Sub-account created',
    );
    idIn(await legacy(server, 'creditTransfert.do', { accessToken: parent.key, targetPseudo: 'leaving', creditAmount: '4' }), 'Transfer done');
    const key = ((await (await fetch(`${server.url}/http/2.0/createAuthorisation.do?pseudo=leaving&pass=leaving-pass`)).json()) as { accessToken: string })
      .accessToken;
    const channelId = (await request(server, 'GET', '/commons/v1/channels', { key })).body.items[0].channelId;
    const smpp = await request(server, 'POST', `/admin/v1/channels/${channelId}/smpp-credentials`, {
      key: server.adminKey,
      body: { systemId: 'leaving', password: 'pw' },
    });
    assert.equal(smpp.status, 201, smpp.text);

    const stranger = await createTenant(server, { name: 'Stranger' });
    const notTheirs = await legacy(server, 'deleteSubAccount.do', { accessToken: stranger.key, pseudoToDelete: 'leaving' });
    assert.equal(notTheirs.status, 404);
    assert.equal(notTheirs.text, '41 | Unknown target account: pseudoToDelete: no sub-account "leaving" of this account');
    assert.match((await legacy(server, 'deleteSubAccount.do', { accessToken: parent.key })).text, /^35 \| .*pseudoToDelete: is required$/);

    const deleted = await legacy(server, 'deleteSubAccount.do', { accessToken: parent.key, pseudoToDelete: 'LEAVING' });
    assert.equal(idIn(deleted, 'Sub-account deleted'), subId);
    assert.equal((await legacy(server, 'credit.do', { accessToken: parent.key })).text, '10.0');
    const sub = await organisation(subId);
    assert.equal(sub.balance.amount, 0);
    assert.equal(sub.state, 'SUSPENDED');
    assert.equal((await legacy(server, 'credit.do', { pseudo: 'leaving', pass: 'leaving-pass' })).status, 401);
    assert.equal((await request(server, 'GET', '/sms/v1/messages', { key })).status, 401);
    assert.equal((await request(server, 'GET', `/admin/v1/channels/${channelId}/smpp-credentials`, { key: server.adminKey })).body.items.length, 0);
    assert.equal((await legacy(server, 'deleteSubAccount.do', { accessToken: parent.key, pseudoToDelete: 'leaving' })).status, 404);
    // The login can be given again.
    idIn(await legacy(server, 'createSubAccount.do', { accessToken: parent.key, newPseudo: 'leaving', newPass: 'another-pass' }), 'Sub-account created');

    // A sub-account with sub-accounts of its own is not deleted.
    await legacy(server, 'createSubAccount.do', { accessToken: parent.key, newPseudo: 'middle', newPass: 'middle-pass' });
    idIn(
      await legacy(server, 'createSubAccount.do', { pseudo: 'middle', pass: 'middle-pass', newPseudo: 'bottom', newPass: 'bottom-pass' }),
      'Sub-account created',
    );
    const busy = await legacy(server, 'deleteSubAccount.do', { accessToken: parent.key, pseudoToDelete: 'middle' });
    assert.equal(busy.status, 409);
    assert.match(busy.text, /^35 \| .*pseudoToDelete: the sub-account "middle" has sub-accounts of its own/);
  });

  test('addContact.do: contacts in groups, updated by number; sendSMS.do?groupe= sends to a group', async () => {
    const t = await createTenant(server, { balance: 5 });
    const other = await createTenant(server, { balance: 5 });
    const first = await raw(
      server,
      '/http/1.6/addContact.do',
      `accessToken=${encodeURIComponent(t.key)}&nom=Dupond&prenom=J%E9r%F4me&mobile=0612345678&groupes=Groupe1,Clients+%A4`,
    );
    const contactId = idIn(first, 'Contact created');
    const again = await legacy(server, 'addContact.do', { accessToken: t.key, nom: 'Dupond', mobile: '+33612345678', groupes: 'Groupe2', date: '01021990' });
    assert.equal(idIn(again, 'Contact updated'), contactId);
    idIn(await legacy(server, 'addContact.do', { accessToken: t.key, nom: 'Martin', mobile: '33611111111', groupes: 'Groupe2' }, 'POST'), 'Contact created');

    // One contact: one message. Two: a campaign of two.
    const one = idIn(await legacy(server, 'sendSMS.do', { accessToken: t.key, message: 'Bonjour', groupe: 'Clients €' }), 'Accepted');
    assert.equal((await request(server, 'GET', `/sms/v1/messages/${one}`, { key: t.key })).body.recipient.to, '33612345678');
    const two = idIn(await legacy(server, 'sendSMS.do', { accessToken: t.key, message: 'Bonjour', groupe: 'Groupe2' }, 'POST'), 'Accepted');
    const members = await request(server, 'GET', `/sms/v1/messages?searchBy[campaignId]=${two}`, { key: t.key });
    assert.deepEqual(members.body.items.map((m: any) => m.recipient.to).sort(), ['33611111111', '33612345678']);

    const cases: Array<[string, Record<string, string>, RegExp]> = [
      ['sendSMS.do', { message: 'x', groupe: 'Nope' }, /groupe: no contact group named "Nope"/],
      ['sendSMS.do', { message: 'x', groupe: 'Groupe1', numero: '33612345678' }, /groupe: give numero or groupe, not both/],
      ['addContact.do', { mobile: '0612345678' }, /nom: is required/],
      ['addContact.do', { nom: 'X' }, /mobile: is required/],
      ['addContact.do', { nom: 'X', mobile: 'abc' }, /mobile: must be a phone number/],
      ['addContact.do', { nom: 'X', mobile: '0612345678', date: '2020-01-01' }, /date: "2020-01-01" must be a date written ddMMyyyy/],
      ['addContact.do', { nom: 'X', mobile: '0612345678', groupes: 'g'.repeat(101) }, /groupes: at most 100 characters/],
    ];
    for (const [op, params, detail] of cases) {
      const a = await legacy(server, op, { accessToken: t.key, ...params });
      assert.equal(a.status, 400, a.text);
      assert.match(a.text, /^35 \| /);
      assert.match(a.text, detail);
    }
    // Groups belong to their organisation.
    assert.match(
      (await legacy(server, 'sendSMS.do', { accessToken: other.key, message: 'x', groupe: 'Groupe1' })).text,
      /^35 \| .*no contact group named "Groupe1"/,
    );
    const voice = await createTenant(server, { type: 'VOICE', balance: 1 });
    assert.match(
      (await legacy(server, 'sendVoiceMessage.do', { accessToken: voice.key, message: 'x', groupe: 'Groupe1' })).text,
      /^35 \| .*groupe: contact groups are for sendSMS.do/,
    );
  });
});
