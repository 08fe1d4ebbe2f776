import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Services } from '../../core/services.ts';
import { asCoreError, CoreError, RateLimitedError, StorageError } from '../../core/errors.ts';
import { LegacyAccounts } from './accounts.ts';
import { type LegacyFailure, legacyCredit, legacyFailureOf, legacyLine, type LegacyOperationKind } from './errors.ts';
import { LegacyHistory } from './history.ts';
import { answerCharsetOf, FILE_FIELD, type LegacyParams, legacyParamsOf, MULTIPART_BODY_LIMIT, registerLegacyBodyParsers, TAKE_TURN } from './params.ts';
import { type AnswerCharset, charsetLabel, encodeText } from './charset.ts';
import { takeTurn } from '../http-turns.ts';
import { LegacyService } from './service.ts';

/**
 * The operations that answer in ISO-8859-15 unless the request asks for another charset: the lists that carry
 * message text, which the legacy manuals give in the API's charset (ISO-8859-15). The other answers are ASCII
 * (codes, ids, numbers, dates), apart from what an error quotes of the request, and are labelled UTF-8.
 */
const ISO_8859_15_ANSWERS: ReadonlySet<string> = new Set(['smsList.do', 'responseList.do']);

/** The charset an operation answers in when the request does not say. */
function operationCharset(url: string): AnswerCharset {
  const op = /\/http\/1\.6\/([^/?]+)/.exec(url)?.[1];
  return op !== undefined && ISO_8859_15_ANSWERS.has(op) ? 'iso-8859-15' : 'utf-8';
}

/** A text answer in the charset the request asked for (answerCharsetOf), the Content-Type saying which. */
function sendText(req: FastifyRequest, reply: FastifyReply, status: number, text: string): FastifyReply {
  const charset = answerCharsetOf(req, operationCharset(req.url));
  return reply
    .code(status)
    .type(`text/plain; charset=${charsetLabel(charset)}`)
    .send(encodeText(text, charset));
}

const str = (description: string) => Type.Optional(Type.String({ description }));

const COMMON = {
  accessToken: str('API key of a channel (the operation says of which type)'),
  pseudo: str('Without accessToken: a sub-account’s login (createSubAccount.do), with pass'),
  pass: str('The password of pseudo'),
  charset: str(
    'UTF-8, ISO-8859-15 or ISO-8859-1: how the parameters are encoded, and the charset of the answer (its Content-Type names it; a character the charset lacks is answered as ?). Without it, parameters are read as ISO-8859-15 (the legacy API’s charset), or UTF-8 for classe_msg=9 and for values whose bytes are UTF-8 with multi-byte characters; smsList.do and responseList.do answer in ISO-8859-15 and the others in UTF-8, unless a form’s Content-Type names a charset',
  ),
};

const SMS_OPTIONS = {
  classe_msg: str('2 (default), 4 (replies allowed) or 9 (Unicode; the text in UTF-8)'),
  date_envoi: str('ddMMyyyy-HH:mm or ddMMyyyy, in the organisation’s time zone (Europe/Paris by default); a future date schedules the send'),
  refClient: str('Client reference, at most 40 characters'),
  nbr_msg: str('Most SMS parts the text may take, 1–10 (default 5)'),
  stop: str('1: add the STOP mention if the message stays one SMS; 2: always'),
  notification_url: str('Delivery reports, called with GET'),
  notification_url_reponse: str('Replies, called with GET'),
};

const SEND_SMS = {
  ...COMMON,
  message: str('The text'),
  numero: str('Comma-separated numbers: 06…, 336… or +336…'),
  groupe: str('Instead of numero: the name of a contact group (addContact.do)'),
  emetteur: str('Sender ID, at most 11 characters'),
  ...SMS_OPTIONS,
};

const SEND_BATCH = {
  ...COMMON,
  [FILE_FIELD]: str(
    'The file (a multipart/form-data file part): one SMS a row, numero;message;emetteur[;ref], `;` or `,` separated, fields quoted with " when needed, an optional numero… header row; ISO-8859-15 unless it starts with a UTF-8 byte order mark or the request says UTF-8',
  ),
  emetteur: str('Sender ID of the rows that give none'),
  ...SMS_OPTIONS,
};

const SEND_VOICE = {
  ...COMMON,
  message: str('The text to speak, at most 160 characters'),
  numero: str('Comma-separated numbers: 06…, 336… or +336…'),
  title: str('Spoken before the message (a default title otherwise)'),
  date_envoi: str('ddMMyyyy-HH:mm or ddMMyyyy, in the organisation’s time zone (Europe/Paris by default)'),
  language: str('fr-FR (default), en-GB, de-DE, es-ES, it-IT, pt-PT or nl-NL'),
  refClient: str('Client reference, at most 40 characters'),
  notification_url: str('Call reports, called with GET'),
};

const BY_ID = { ...COMMON, smsID: str('The id answered by the send') };
const TRANSFER = {
  ...COMMON,
  targetPseudo: str('The account that receives the credit: a sub-account’s login, or an organisation’s id (a sub-organisation or the parent)'),
  creditAmount: str('Whole euros'),
  reference: str('Reference kept with the transfer'),
};
const SMS_LIST = { ...COMMON, offset: str('How many sends: 1–1000, default 50') };
const RESPONSE_LIST = {
  ...COMMON,
  start: str('Index of the first reply, from 0 (the newest)'),
  offset: str('Page size: 1–1000, default 50'),
  startDate: str('ddMMyyyy-HH:mm: instead of start and offset, replies from this minute (with endDate)'),
  endDate: str('ddMMyyyy-HH:mm: replies until this minute, included'),
};
const CONTACT = {
  nom: str('Last name'),
  prenom: str('First name'),
  societe: str('Company'),
  mobile: str('Mobile number: 06… or 336…'),
  date: str('Date of birth, ddMMyyyy'),
};
const CREATE_SUB_ACCOUNT = {
  ...COMMON,
  newPseudo: str('The new login: 1 to 50 characters, no spaces, unique whatever the case'),
  newPass: str('Its password: 8 to 128 characters'),
  reference: str('Reference kept with the sub-account'),
  ...CONTACT,
  adresse: str('Address'),
  ville: str('City'),
  codePostal: str('Postal code'),
  telephone: str('Phone number'),
  fax: str('Fax number'),
  email: str('Email address'),
};
const DELETE_SUB_ACCOUNT = { ...COMMON, pseudoToDelete: str('The login of the sub-account to delete') };
const ADD_CONTACT = {
  ...CONTACT,
  ...COMMON,
  groupes: str('Comma-separated group names; missing groups are created'),
  other: str('Anything else about the contact'),
};

type Operation = (params: LegacyParams, method: 'GET' | 'POST') => Promise<{ status?: number; text: string }>;

interface RouteOptions {
  kind?: LegacyOperationKind;
  /** The operation takes a multipart/form-data body (sendSMSBatch.do's file). */
  multipart?: boolean;
}

function retryAfter(reply: FastifyReply, err: unknown): void {
  if (err instanceof RateLimitedError) reply.header('retry-after', Math.max(1, Math.ceil((err.retryAt - Date.now()) / 1000)));
  const core = asCoreError(err);
  if (core instanceof StorageError) reply.header('retry-after', core.retryAfterSeconds);
}

/** A failure of Fastify itself (a body it could not take, a parameter its schema refused) or of the operation. */
function failureOf(err: unknown, kind: LegacyOperationKind = 'message'): LegacyFailure {
  const fe = err as FastifyError;
  if (!(err instanceof CoreError) && fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 500) {
    const description = `Missing or invalid parameter: ${fe.message}`;
    return { code: 35, httpStatus: fe.statusCode, description, line: legacyLine(35, description) };
  }
  return legacyFailureOf(err, kind);
}

const lineResponses = (ok: string) => {
  const line = (what: string) => ({ description: what, content: { 'text/plain': { schema: Type.String() } } });
  return {
    200: line(ok),
    400: line('`35 | …`: a missing or invalid parameter, named'),
    401: line('`32 | …`: missing or unknown accessToken, or a wrong pseudo and pass'),
    403: line('`32 | …`: a key of another channel type or role'),
    404: line('`61 | …` (unknown smsID) or `41 | …` (unknown account)'),
    409: line('`33 | …`: insufficient credit; `35 | …`: no longer scheduled; `41 | …`: login already taken'),
    500: line('`31 | …`: internal error'),
    503: line('`31 | …`: text-to-speech unavailable; `50 | …`: the database is unavailable (with Retry-After)'),
    507: line('`50 | …`: the disk holding the database is full (with Retry-After)'),
  };
};

/**
 * The legacy HTTP 1.6 interface: GET with a query string or POST with a form, answered in text/plain lines
 * `code | description | id`, and /http/2.0/createAuthorisation.do answered in JSON. Parameters are read from the
 * bytes sent (ISO-8859-15 or UTF-8, see charset.ts). Each operation runs on the same services as REST.
 */
export function legacyRoutes(app: FastifyInstance, services: Services): void {
  const legacy = new LegacyService(
    services.access,
    services.tenancy,
    services.messaging,
    services.sms,
    services.campaigns,
    services.voice,
    services.funds,
    services.subAccounts,
    services.contacts,
    services.sends,
  );
  const accounts = new LegacyAccounts(services.tenancy, services.subAccounts, services.contacts);
  const history = new LegacyHistory(services.tenancy, services.messaging, services.sends);

  void app.register(async (scope) => {
    // Bodies are parsed here only: the JSON routes keep answering 415 to forms.
    registerLegacyBodyParsers(scope);
    const tags = ['Legacy HTTP 1.6'];

    scope.setErrorHandler((err, req, reply) => {
      const failure = failureOf(err);
      if (failure.code === 31) reply.log.error({ err }, 'legacy request failed');
      retryAfter(reply, err);
      return sendText(req, reply, failure.httpStatus, failure.line);
    });

    const route = (op: string, summary: string, description: string, fields: Record<string, unknown>, run: Operation, options: RouteOptions = {}) => {
      const schema = Type.Object(fields as never, { additionalProperties: true });
      const handler = async (req: FastifyRequest, reply: FastifyReply) => {
        try {
          const params = legacyParamsOf(req);
          params[TAKE_TURN] = (organisationId) => takeTurn(services, req, organisationId);
          const answer = await run(params, req.method === 'POST' ? 'POST' : 'GET');
          return sendText(req, reply, answer.status ?? 200, answer.text);
        } catch (err) {
          const failure = failureOf(err, options.kind);
          if (failure.code === 31 && !(err instanceof CoreError)) req.log.error({ err }, 'legacy request failed');
          retryAfter(reply, err);
          return sendText(req, reply, failure.httpStatus, failure.line);
        }
      };
      const doc = { tags, summary, description, response: lineResponses('`0 | …`, or the operation’s own answer (see its description)') };
      scope.get(`/http/1.6/${op}`, { schema: { ...doc, querystring: schema } }, handler);
      // Forms are the legacy way; JSON bodies with the same fields are read too.
      const consumes = options.multipart ? ['multipart/form-data'] : ['application/x-www-form-urlencoded', 'application/json'];
      scope.post(`/http/1.6/${op}`, { ...(options.multipart ? { bodyLimit: MULTIPART_BODY_LIMIT } : {}), schema: { ...doc, consumes, body: schema } }, handler);
    };

    const sendAnswer = (r: { code: 0 | 33; smsId: string }) =>
      r.code === 0
        ? { text: legacyLine(0, 'Accepted', r.smsId) }
        : { status: 409, text: legacyLine(33, 'Insufficient credit: the balance does not cover the send', r.smsId) };

    route(
      'sendSMS.do',
      'Send an SMS (legacy)',
      'Answers `0 | Accepted | <smsID>`; errors `32` (accessToken), `33` (credit), `35` (parameter, named), `31`. ' +
        'A send to several numbers, or to a contact group (`groupe`), gets one smsID (a campaign of one message per number).',
      SEND_SMS,
      async (p, method) => sendAnswer(await legacy.sendSms(await legacy.authenticate(p, 'messages:send', 'SMS'), p, method)),
    );
    route(
      'sendSMSBatch.do',
      'Send a file of personalised SMS (legacy)',
      'POST multipart/form-data with the file in the `fichier` part: one SMS a row, `numero;message;emetteur[;ref]`. ' +
        'The other parameters are sendSMS.do’s, for every row; a row’s emetteur and ref win. Every row is checked first: ' +
        'one bad row refuses the file (`35`, naming its line). Answers `0 | Accepted | <campagneID>`: one campaign.',
      SEND_BATCH,
      async (p) => sendAnswer(await legacy.sendBatch(await legacy.authenticate(p, 'messages:send', 'SMS'), p)),
      { multipart: true },
    );
    route(
      'sendVoiceMessage.do',
      'Send a text-to-speech voice message (legacy)',
      'The key must be a VOICE channel’s. The title then the message are spoken in the language, as 8 kHz mono WAV. ' +
        'Answers `0 | Accepted | <smsID>`; `31` when text-to-speech is unavailable (HTTP 503).',
      SEND_VOICE,
      async (p, method) => sendAnswer(await legacy.sendVoice(await legacy.authenticate(p, 'messages:send', 'VOICE'), p, method)),
    );
    route('smsStatus.do', 'Status of a send (legacy)', 'Answers `<status code> | <description>`; `61` for an unknown smsID.', BY_ID, async (p) => {
      const s = await legacy.status(await legacy.authenticate(p, 'messages:read'), p);
      return { text: legacyLine(s.code, s.description) };
    });
    route('compteRendu.do', 'Per-number report of a send (legacy)', 'Answers `<number> <status code> | <number> <status code> …`.', BY_ID, async (p) => {
      const items = (await legacy.report(await legacy.authenticate(p, 'messages:read'), p)).filter((i) => i.status !== null);
      if (items.length === 0) return { status: 404, text: legacyLine(61, 'SMS not found: the send was deleted') };
      return { text: items.map((i) => `${i.msisdn} ${i.status!.code}`).join(' | ') };
    });
    route('deleteSMS.do', 'Delete a scheduled send (legacy)', 'Cancels and refunds; `35` once it has been sent.', BY_ID, async (p) => {
      const smsId = await legacy.delete(await legacy.authenticate(p, 'messages:send'), p);
      return { text: legacyLine(0, 'Deleted', smsId) };
    });
    route(
      'credit.do',
      'Balance (legacy)',
      'Answers the bare balance of the key’s organisation in euros, always with a decimal part: `100.0`, `212.5`.',
      COMMON,
      async (p) => ({ text: legacyCredit(await legacy.credit(await legacy.authenticate(p, 'messages:send'))) }),
    );
    route(
      'creditTransfert.do',
      'Transfer credit to another organisation (legacy)',
      'ADMIN key. The same transfer as POST /commons/v1/organisations/{org}/transfers, from the key’s organisation. ' +
        'Answers `0 | Transfer done | <transferId>`; `33` when the balance is short; `41` for an unknown or unrelated target.',
      TRANSFER,
      async (p) => {
        const id = await legacy.transfer(await legacy.authenticate(p, 'funds:transfer'), p);
        return { text: legacyLine(0, 'Transfer done', id) };
      },
      { kind: 'account' },
    );
    route(
      'smsList.do',
      'Recent sends (legacy)',
      'The `offset` newest SMS sends of the key’s channel (every SMS channel of the organisation for MANAGER and ADMIN ' +
        'keys), newest first, one row each: `<smsID> | <dd/MM/yyyy HH:mm> | <text> | <number> | <cost> | <recipients>`, ' +
        'rows separated by an empty line. The date is the send’s (in the organisation’s time zone), the cost in euros; a ' +
        'send to several numbers shows its first number and how many it went to. Deleted sends are left out.',
      SMS_LIST,
      async (p) => ({ text: await history.smsList(await legacy.authenticate(p, 'messages:read'), p) }),
    );
    route(
      'responseList.do',
      'Replies received (legacy)',
      'Replies to the key’s channel (every SMS channel of the organisation for MANAGER and ADMIN keys), newest first, one ' +
        'line each: `<responseID> | <ddMMyyyy-HH:mm> | <from> | <text> | <to> | <smsID>` (`smsID`: the send it answers, ' +
        'empty when none). By page (`start`, `offset`) or by `startDate` and `endDate` (at most 1000 replies).',
      RESPONSE_LIST,
      async (p) => ({ text: await history.responseList(await legacy.authenticate(p, 'messages:read'), p) }),
    );
    route(
      'addContact.do',
      'Add a contact to the address book (legacy)',
      'A contact of the key’s organisation (one per number: adding a number again updates it), in the `groupes` that ' +
        'sendSMS.do’s `groupe` sends to. Answers `0 | Contact created | <contactId>` (`Contact updated` for a known number).',
      ADD_CONTACT,
      async (p) => {
        const { id, created } = await accounts.addContact(await legacy.authenticate(p, 'messages:send'), p);
        return { text: legacyLine(0, created ? 'Contact created' : 'Contact updated', id) };
      },
    );
    route(
      'createSubAccount.do',
      'Create a sub-account (legacy)',
      'ADMIN key. A sub-organisation of the key’s organisation with an SMS channel; `newPseudo` and `newPass` then ' +
        'authenticate as its ADMIN key (`pseudo` and `pass`), and `targetPseudo` of creditTransfert.do names it. ' +
        'Answers `0 | Sub-account created | <organisationId>`; `41` when the login is taken.',
      CREATE_SUB_ACCOUNT,
      async (p) => {
        const id = await accounts.createSubAccount(await legacy.authenticate(p, 'organisation:admin'), p);
        return { text: legacyLine(0, 'Sub-account created', id) };
      },
      { kind: 'newAccount' },
    );
    route(
      'deleteSubAccount.do',
      'Delete a sub-account (legacy)',
      'ADMIN key of its parent. Its keys, login and SMPP credentials stop working, its balance goes back to the parent ' +
        '(a transfer) and it is suspended. Answers `0 | Sub-account deleted | <organisationId>`; `41` for an unknown login.',
      DELETE_SUB_ACCOUNT,
      async (p) => {
        const id = await accounts.deleteSubAccount(await legacy.authenticate(p, 'organisation:admin'), p);
        return { text: legacyLine(0, 'Sub-account deleted', id) };
      },
      { kind: 'account' },
    );
  });

  // createAuthorisation.do answers JSON, its errors too: the libraries read both as JSON.
  void app.register(async (scope) => {
    registerLegacyBodyParsers(scope);
    const jsonError = (reply: FastifyReply, err: unknown) => {
      const failure = failureOf(err);
      if (failure.code === 31) reply.log.error({ err }, 'legacy request failed');
      retryAfter(reply, err);
      return reply.code(failure.httpStatus).send({ code: failure.code, description: failure.description });
    };
    scope.setErrorHandler((err, _req, reply) => jsonError(reply, err));
    const Authorisation = Type.Object({
      id: Type.String({ description: 'The key’s id (its credentialId)' }),
      accessToken: Type.String({ description: 'The key: an accessToken here, an X-Api-Key on REST' }),
      creationDate: Type.String({ description: 'ddMMyyyy' }),
      state: Type.String({ description: 'ACTIVE' }),
      expiration: Type.String({ description: 'ddMMyyyy; empty: it does not expire' }),
      account: Type.String({ description: 'The account’s login (a sub-account’s), else its organisation’s id' }),
    });
    const ErrorBody = Type.Object({ code: Type.Integer(), description: Type.String() });
    const schema = Type.Object({ ...COMMON, username: str('Another name of pseudo') }, { additionalProperties: true });
    const doc = {
      tags: ['Legacy HTTP 1.6'],
      summary: 'Create an API key (legacy)',
      description:
        'ADMIN key, or a sub-account’s login. A new key on the same channel with the same roles, answered in JSON ' +
        '`{id, accessToken, creationDate, state, expiration, account}`; it works as accessToken and on REST. Errors are ' +
        'JSON too: `{code, description}` with the legacy codes (32 authentication, 35 parameter, 31 internal).',
      response: { 200: Authorisation, 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 500: ErrorBody },
    };
    const handler = async (req: FastifyRequest, reply: FastifyReply) => {
      try {
        const params = legacyParamsOf(req);
        return await accounts.createAuthorisation(await legacy.authenticate(params, 'organisation:admin'));
      } catch (err) {
        return jsonError(reply, err);
      }
    };
    scope.get('/http/2.0/createAuthorisation.do', { schema: { ...doc, querystring: schema } }, handler);
    scope.post(
      '/http/2.0/createAuthorisation.do',
      { schema: { ...doc, consumes: ['application/x-www-form-urlencoded', 'application/json'], body: schema } },
      handler,
    );
  });
}
