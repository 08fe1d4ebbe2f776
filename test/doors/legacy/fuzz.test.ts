import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
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
};

/** Raw, already percent-encoded values: malformed escapes, NUL, ISO-8859-15 and UTF-8 bytes, huge and odd numbers. */
const EDGE_VALUES = ['', '%', '%zz', '%00', 'a%00b', 'caf%E9', 'caf%C3%A9', '%A4', '%FF%FE', '%ED%A0%80', '1e20', '-1', '0', '33612345678', '0611223344', '%2B33612345678', '31122099-25:61', '01012020', 'x'.repeat(2_000), '%F0%9F%98%80', 'null', '[]', '{}'];

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
        return {};
      default:
        return { smsID: smsId };
    }
  };

  test(`random and malformed parameters, by GET and by form, never get a 5xx or a malformed answer (seed ${SEED})`, async () => {
    const sent = await (await fetch(`${server.url}/http/1.6/sendSMS.do?accessToken=${encodeURIComponent(sms.key)}&message=Hi&numero=33612345678&date_envoi=01012035-10:00`)).text();
    smsId = /^0 \| [^|]+ \| (\S+)/.exec(sent)?.[1] ?? '';
    assert.ok(smsId, sent);
    const failures: string[] = [];
    const codes = new Map<string, number>();
    for (const [op, fields] of Object.entries(OPERATIONS)) {
      // A valid request most of the time, with some of its fields replaced by random or malformed ones.
      const params = fc.record({
        token: fc.constantFrom('sms', 'sms', 'sms', 'voice', 'none', 'bogus'),
        pairs: fc.array(fc.tuple(fc.constantFrom(...fields, 'accessToken', 'charset', 'unknown'), encoded), { maxLength: 4 }),
        method: fc.constantFrom('GET', 'POST'),
      });
      const valid = base(op);
      await fc.assert(
        fc.asyncProperty(params, async ({ token, pairs, method }) => {
          const key = token === 'sms' ? sms.key : token === 'voice' ? voice.key : token === 'bogus' ? 'not-a-key' : null;
          const replaced = new Set(pairs.map(([k]) => k));
          const kept = Object.entries(valid).filter(([k]) => !replaced.has(k)).map(([k, v]) => `${k}=${encodeURIComponent(v)}`);
          const query = [...(key ? [`accessToken=${encodeURIComponent(key)}`] : []), ...kept, ...pairs.map(([k, v]) => `${k}=${v}`)].join('&');
          const res =
            method === 'GET'
              ? await fetch(`${server.url}/http/1.6/${op}?${query}`)
              : await fetch(`${server.url}/http/1.6/${op}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: query });
          const text = await res.text();
          const code = /^(\d+) \| /.exec(text)?.[1] ?? (res.status === 200 ? 'bare' : `?${res.status}`);
          codes.set(`${op} ${code}`, (codes.get(`${op} ${code}`) ?? 0) + 1);
          if (res.status >= 500 && !(res.status === 503 && op === 'sendVoiceMessage.do')) failures.push(`${method} ${op}?${query.slice(0, 200)} → ${res.status} ${text.slice(0, 200)}`);
          else if (res.status !== 200 && !/^\d+ \| /.test(text)) failures.push(`${method} ${op}?${query.slice(0, 200)} → ${res.status} not a legacy answer: ${text.slice(0, 200)}`);
        }),
        { seed: SEED, numRuns: RUNS_PER_OPERATION },
      );
    }
    process.stdout.write(`# ${dialect}: ${[...codes].map(([k, n]) => `${k}×${n}`).join(', ')}\n`);
    assert.deepEqual(failures.slice(0, 20), [], `${failures.length} bad answers`);
    assert.ok([...codes.keys()].some((k) => k.startsWith('sendSMS.do 0')), 'some sends get through');
  });
});
