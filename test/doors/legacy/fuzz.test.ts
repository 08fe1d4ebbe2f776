import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { percentDecode } from '../../../src/doors/legacy/charset.ts';
import { createTenant, forEachDialect, startTestServer, type Tenant, type TestServer } from '../../support/server.ts';

const RUNS_PER_OPERATION = Number(process.env.TERN_FUZZ_RUNS ?? 40);
const SEED = Number(process.env.TERN_FUZZ_SEED ?? 20261124);

const OPERATIONS: Record<string, string[]> = {
  'sendSMS.do': ['message', 'numero', 'emetteur', 'classe_msg', 'date_envoi', 'refClient', 'nbr_msg', 'stop', 'notification_url', 'notification_url_reponse'],
  'sendVoiceMessage.do': ['message', 'numero', 'title', 'date_envoi', 'language', 'refClient', 'notification_url'],
  'smsStatus.do': ['smsID'],
  'compteRendu.do': ['smsID'],
  'deleteSMS.do': ['smsID'],
  'credit.do': [],
  'creditTransfert.do': ['targetPseudo', 'creditAmount', 'reference'],
  'sendSMSBatch.do': ['fichier', 'emetteur', 'classe_msg', 'date_envoi', 'refClient', 'nbr_msg', 'stop', 'notification_url'],
  'smsList.do': ['offset'],
  'responseList.do': ['start', 'offset', 'startDate', 'endDate'],
  'addContact.do': ['nom', 'prenom', 'mobile', 'groupes', 'societe', 'other', 'date'],
  'createSubAccount.do': ['newPseudo', 'newPass', 'reference', 'nom', 'societe', 'email', 'date'],
  'deleteSubAccount.do': ['pseudoToDelete'],
  'createAuthorisation.do': ['username'],
};

/** Operations answered in JSON (errors too), under /http/2.0. */
const JSON_OPERATIONS = new Set(['createAuthorisation.do']);

const BOUNDARY = 'fuzzBoundary0123';

/** A multipart body of the pairs, as bytes: the `fichier` pair as a file part. */
function multipart(pairs: Array<[string, string]>): Buffer {
  const parts = pairs.map(([k, v]) =>
    Buffer.concat([
      Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${k}"${k === 'fichier' ? '; filename="f.csv"' : ''}\r\n\r\n`),
      percentDecode(Buffer.from(v, 'latin1')),
      Buffer.from('\r\n'),
    ]),
  );
  return Buffer.concat([...parts, Buffer.from(`--${BOUNDARY}--\r\n`)]);
}

/** Raw, already percent-encoded values: malformed escapes, NUL, ISO-8859-15 and UTF-8 bytes, huge and odd numbers. */
const EDGE_VALUES = [
  '',
  '%',
  '%zz',
  '%00',
  'a%00b',
  'caf%E9',
  'caf%C3%A9',
  '%A4',
  '%FF%FE',
  '%ED%A0%80',
  '1e20',
  '-1',
  '0',
  '33612345678',
  '0611223344',
  '%2B33612345678',
  '31122099-25:61',
  '01012020',
  'x'.repeat(2_000),
  '%F0%9F%98%80',
  'null',
  '[]',
  '{}',
];

const encoded = fc.oneof(
  fc.constantFrom(...EDGE_VALUES),
  fc.string({ maxLength: 60 }).map(encodeURIComponent),
  fc.uint8Array({ maxLength: 30 }).map((bytes) => [...bytes].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('')),
);

forEachDialect('fuzz: every legacy operation', (dialect) => {
  let server: TestServer;
  let sms: Tenant;
  let voice: Tenant;
  before(async () => {
    server = await startTestServer(dialect);
    sms = await createTenant(server, { balance: 100, channel: { fromFieldList: ['Tern'] } });
    voice = await createTenant(server, { balance: 100, type: 'VOICE' });
    const login = await fetch(
      `${server.url}/http/1.6/createSubAccount.do?accessToken=${encodeURIComponent(sms.key)}&newPseudo=fuzz-login&newPass=fuzz-login-pass`,
    );
    assert.match(await login.text(), /^0 \| /);
  });
  after(() => server.stop());

  let smsId = '';
  /** A valid request of the operation, to change a few fields of. */
  const base = (op: string): Record<string, string> => {
    switch (op) {
      case 'sendSMS.do':
        return { message: 'Hello', numero: '33612345678', emetteur: 'Tern' };
      case 'sendVoiceMessage.do':
        return { message: 'Bonjour', numero: '33612345678' };
      case 'creditTransfert.do':
        return { targetPseudo: voice.organisationId, creditAmount: '1' };
      case 'credit.do':
      case 'smsList.do':
      case 'responseList.do':
      case 'createAuthorisation.do':
        return {};
      case 'sendSMSBatch.do':
        return { fichier: '33612345678%3BHello%3BTern%0A0612345679%3BCaf%E9%0A' };
      case 'addContact.do':
        return { nom: 'Dupond', mobile: '0612345678', groupes: 'fuzz' };
      case 'createSubAccount.do':
        return { newPseudo: 'fuzz-created', newPass: 'fuzz-password' };
      case 'deleteSubAccount.do':
        return { pseudoToDelete: 'nobody' };
      default:
        return { smsID: smsId };
    }
  };

  test(`random and malformed parameters, by GET and by form, never get a 5xx or a malformed answer (seed ${SEED})`, async () => {
    const sent = await (
      await fetch(`${server.url}/http/1.6/sendSMS.do?accessToken=${encodeURIComponent(sms.key)}&message=Hi&numero=33612345678&date_envoi=01012035-10:00`)
    ).text();
    smsId = /^0 \| [^|]+ \| (\S+)/.exec(sent)?.[1] ?? '';
    assert.ok(smsId, sent);
    const failures: string[] = [];
    const codes = new Map<string, number>();
    for (const [op, fields] of Object.entries(OPERATIONS)) {
      // A valid request most of the time, with some of its fields replaced by random or malformed ones.
      const params = fc.record({
        token: fc.constantFrom('sms', 'sms', 'sms', 'voice', 'login', 'none', 'bogus'),
        pairs: fc.array(fc.tuple(fc.constantFrom(...fields, 'accessToken', 'charset', 'unknown'), encoded), { maxLength: 4 }),
        method: fc.constantFrom('GET', 'POST'),
      });
      const valid = base(op);
      await fc.assert(
        fc.asyncProperty(params, async ({ token, pairs, method }) => {
          const key = token === 'sms' ? sms.key : token === 'voice' ? voice.key : token === 'bogus' ? 'not-a-key' : null;
          const auth: Array<[string, string]> = key
            ? [['accessToken', encodeURIComponent(key)]]
            : token === 'login'
              ? [
                  ['pseudo', 'fuzz-login'],
                  ['pass', 'fuzz-login-pass'],
                ]
              : [];
          const replaced = new Set(pairs.map(([k]) => k));
          // Values of the valid request are percent-encoded already where they hold ISO-8859-15 bytes (Caf%E9).
          const kept = Object.entries(valid)
            .filter(([k]) => !replaced.has(k))
            .map(([k, v]): [string, string] => [k, op === 'sendSMSBatch.do' ? v : encodeURIComponent(v)]);
          const all = [...auth, ...kept, ...pairs];
          const query = all.map(([k, v]) => `${k}=${v}`).join('&');
          const path = `${server.url}/http/${JSON_OPERATIONS.has(op) ? '2.0' : '1.6'}/${op}`;
          const res =
            method === 'GET'
              ? await fetch(`${path}?${query}`)
              : op === 'sendSMSBatch.do'
                ? await fetch(path, { method: 'POST', headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` }, body: multipart(all) })
                : await fetch(path, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: query });
          const text = await res.text();
          const what = `${method} ${op}?${query.slice(0, 200)}`;
          if (JSON_OPERATIONS.has(op)) {
            let body: any;
            try {
              body = JSON.parse(text);
            } catch {
              failures.push(`${what} → ${res.status} not JSON: ${text.slice(0, 200)}`);
              return;
            }
            const code = res.status === 200 ? 'key' : String(body.code);
            codes.set(`${op} ${code}`, (codes.get(`${op} ${code}`) ?? 0) + 1);
            if (res.status >= 500) failures.push(`${what} → ${res.status} ${text.slice(0, 200)}`);
            else if (res.status === 200 ? typeof body.accessToken !== 'string' : typeof body.code !== 'number' || typeof body.description !== 'string') {
              failures.push(`${what} → ${res.status} not a createAuthorisation.do answer: ${text.slice(0, 200)}`);
            }
            return;
          }
          const code = /^(\d+) \| /.exec(text)?.[1] ?? (res.status === 200 ? 'bare' : `?${res.status}`);
          codes.set(`${op} ${code}`, (codes.get(`${op} ${code}`) ?? 0) + 1);
          if (res.status >= 500 && !(res.status === 503 && op === 'sendVoiceMessage.do')) failures.push(`${what} → ${res.status} ${text.slice(0, 200)}`);
          else if (res.status !== 200 && !/^\d+ \| /.test(text)) failures.push(`${what} → ${res.status} not a legacy answer: ${text.slice(0, 200)}`);
        }),
        { seed: SEED, numRuns: RUNS_PER_OPERATION },
      );
    }
    process.stdout.write(`# ${dialect}: ${[...codes].map(([k, n]) => `${k}×${n}`).join(', ')}\n`);
    assert.deepEqual(failures.slice(0, 20), [], `${failures.length} bad answers`);
    assert.ok(
      [...codes.keys()].some((k) => k.startsWith('sendSMS.do 0')),
      'some sends get through',
    );
    assert.ok(
      [...codes.keys()].some((k) => k.startsWith('sendSMSBatch.do 0')),
      'some batches get through',
    );
    assert.ok(
      [...codes.keys()].some((k) => k === 'createAuthorisation.do key'),
      'some keys are made',
    );
  });
});
