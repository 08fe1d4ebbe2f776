import formbody from '@fastify/formbody';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Services } from '../../core/services.ts';
import { CoreError, RateLimitedError } from '../../core/errors.ts';
import { legacyFailureOf, legacyLine } from './errors.ts';
import { CLIENT_ADDRESS, type LegacyParams, LegacyService } from './service.ts';

const TEXT = 'text/plain; charset=utf-8';

const str = (description: string) => Type.Optional(Type.String({ description }));

const COMMON = { accessToken: str('API key of a channel (the operation says of which type)') };

const SEND_SMS = {
  ...COMMON,
  message: str('The text'),
  numero: str('Comma-separated numbers: 06…, 336… or +336…'),
  emetteur: str('Sender ID, at most 11 characters'),
  classe_msg: str('2 (default), 4 (replies allowed) or 9 (Unicode)'),
  date_envoi: str('ddMMyyyy-HH:mm or ddMMyyyy, French local time (Europe/Paris); a future date schedules the send'),
  refClient: str('Client reference, at most 40 characters'),
  nbr_msg: str('Most SMS parts the text may take, 1–10 (default 5)'),
  stop: str('1: add the STOP mention if the message stays one SMS; 2: always'),
  notification_url: str('Delivery reports, called with GET'),
  notification_url_reponse: str('Replies, called with GET'),
};

const SEND_VOICE = {
  ...COMMON,
  message: str('The text to speak, at most 160 characters'),
  numero: str('Comma-separated numbers: 06…, 336… or +336…'),
  title: str('Spoken before the message (a default title otherwise)'),
  date_envoi: str('ddMMyyyy-HH:mm or ddMMyyyy, French local time (Europe/Paris)'),
  language: str('fr-FR (default), en-GB, de-DE or es-ES'),
  refClient: str('Client reference, at most 40 characters'),
  notification_url: str('Call reports, called with GET'),
};

const BY_ID = { ...COMMON, smsID: str('The id answered by the send') };
const TRANSFER = {
  ...COMMON,
  targetPseudo: str('Id of the organisation that receives the credit (a sub-organisation or the parent)'),
  creditAmount: str('Whole euros'),
  reference: str('Reference kept with the transfer'),
};

type Operation = (params: LegacyParams, method: 'GET' | 'POST') => Promise<{ status?: number; text: string }>;

/** Query parameters and form fields together (a field wins over a parameter of the same name). */
function paramsOf(req: FastifyRequest): LegacyParams {
  const out: LegacyParams = {};
  const take = (source: unknown) => {
    if (!source || typeof source !== 'object') return;
    for (const [k, v] of Object.entries(source as Record<string, unknown>)) {
      if (typeof v === 'string') out[k] = v;
      else if (typeof v === 'number' || typeof v === 'boolean') out[k] = String(v);
      else if (Array.isArray(v)) out[k] = v.map(String).join(',');
    }
  };
  take(req.query);
  take(req.body);
  out[CLIENT_ADDRESS] = req.ip;
  return out;
}

/**
 * The legacy HTTP 1.6 interface: GET with a query string or POST with a form, answered in text/plain lines
 * `code | description | id`. Each operation runs on the same services as REST.
 */
export function legacyRoutes(app: FastifyInstance, services: Services): void {
  void app.register(async (scope) => {
    // Forms are parsed here only: the JSON routes keep answering 415 to them.
    await scope.register(formbody);
    const legacy = new LegacyService(services.access, services.tenancy, services.messaging, services.voice, services.funds);
    const tags = ['Legacy HTTP 1.6'];

    scope.setErrorHandler((err, _req, reply) => {
      const fe = err as { validation?: unknown; statusCode?: number; message: string; code?: string };
      if (!(err instanceof CoreError) && fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 500) {
        return reply.code(fe.statusCode).type(TEXT).send(legacyLine(35, `Missing or invalid parameter: ${fe.message}`));
      }
      const failure = legacyFailureOf(err);
      if (failure.code === 31) reply.log.error({ err }, 'legacy request failed');
      return reply.code(failure.httpStatus).type(TEXT).send(failure.line);
    });

    const route = (op: string, summary: string, description: string, fields: Record<string, unknown>, run: Operation, kind: 'message' | 'transfer' = 'message') => {
      const schema = Type.Object(fields as never, { additionalProperties: true });
      const handler = async (req: FastifyRequest, reply: FastifyReply) => {
        try {
          const answer = await run(paramsOf(req), req.method === 'POST' ? 'POST' : 'GET');
          return reply.code(answer.status ?? 200).type(TEXT).send(answer.text);
        } catch (err) {
          const failure = legacyFailureOf(err, kind);
          if (failure.code === 31 && !(err instanceof CoreError)) req.log.error({ err }, 'legacy request failed');
          if (err instanceof RateLimitedError) reply.header('retry-after', Math.max(1, Math.ceil((err.retryAt - Date.now()) / 1000)));
          return reply.code(failure.httpStatus).type(TEXT).send(failure.line);
        }
      };
      const line = (what: string) => ({ description: what, content: { 'text/plain': { schema: Type.String() } } });
      const response = {
        200: line('`0 | …` (or the bare answer of credit.do, smsStatus.do and compteRendu.do)'),
        400: line('`35 | …`: a missing or invalid parameter, named'),
        401: line('`32 | …`: missing or unknown accessToken'),
        403: line('`32 | …`: a key of another channel type or role'),
        404: line('`61 | …` (unknown smsID) or `41 | …` (unknown target)'),
        409: line('`33 | …`: insufficient credit; `35 | …`: no longer scheduled'),
        500: line('`31 | …`: internal error'),
        503: line('`31 | …`: text-to-speech unavailable'),
      };
      const doc = { tags, summary, description, response };
      scope.get(`/http/1.6/${op}`, { schema: { ...doc, querystring: schema } }, handler);
      // Forms are the legacy way; JSON bodies with the same fields are read too.
      scope.post(
        `/http/1.6/${op}`,
        { schema: { ...doc, consumes: ['application/x-www-form-urlencoded', 'application/json'], body: schema } },
        handler,
      );
    };

    const sendAnswer = (r: { code: 0 | 33; smsId: string }) =>
      r.code === 0
        ? { text: legacyLine(0, 'Accepted', r.smsId) }
        : { status: 409, text: legacyLine(33, 'Insufficient credit: the balance does not cover the send', r.smsId) };

    route(
      'sendSMS.do',
      'Send an SMS (legacy)',
      'Answers `0 | Accepted | <smsID>`; errors `32` (accessToken), `33` (credit), `35` (parameter, named), `31`. ' +
        'A send to several numbers gets one smsID (a campaign of one message per number).',
      SEND_SMS,
      async (p, method) => sendAnswer(await legacy.sendSms(await legacy.authenticate(p, 'messages:send', 'SMS'), p, method)),
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
    route(
      'compteRendu.do',
      'Per-number report of a send (legacy)',
      'Answers `<number> <status code> | <number> <status code> …`.',
      BY_ID,
      async (p) => {
        const items = (await legacy.report(await legacy.authenticate(p, 'messages:read'), p)).filter((i) => i.status !== null);
        if (items.length === 0) return { status: 404, text: legacyLine(61, 'SMS not found: the send was deleted') };
        return { text: items.map((i) => `${i.msisdn} ${i.status!.code}`).join(' | ') };
      },
    );
    route('deleteSMS.do', 'Delete a scheduled send (legacy)', 'Cancels and refunds; `35` once it has been sent.', BY_ID, async (p) => {
      const smsId = await legacy.delete(await legacy.authenticate(p, 'messages:send'), p);
      return { text: legacyLine(0, 'Deleted', smsId) };
    });
    route('credit.do', 'Balance (legacy)', 'Answers the bare balance of the key’s organisation in euros, e.g. `212.5`.', COMMON, async (p) => ({
      text: String(await legacy.credit(await legacy.authenticate(p, 'messages:send'))),
    }));
    route(
      'creditTransfert.do',
      'Transfer credit to another organisation (legacy)',
      'ADMIN key. The same transfer as POST /commons/v1/organisations/{org}/transfers, from the key’s organisation. ' +
        'Answers `0 | Transfer done | <transferId>`; `33` when the balance is short; `41` for an unknown or unrelated target.',
      TRANSFER,
      async (p) => {
        const id = await legacy.transfer(await legacy.authenticate(p, 'organisation:admin'), p);
        return { text: legacyLine(0, 'Transfer done', id) };
      },
      'transfer',
    );
  });
}
