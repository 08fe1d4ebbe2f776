/**
 * A legacy request's parameters, read from the bytes the client sent: the query string of the raw URL and the body
 * (a form, or sendSMSBatch.do's multipart form with its file), decoded as charset.ts says. Fastify's own parsers read
 * everything as UTF-8, so the legacy routes parse their bodies here.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { fail } from '../../core/errors.ts';
import { unstorableText } from '../../domain/text-safety.ts';
import {
  type AnswerCharset,
  answerCharset,
  asciiOf,
  type Charset,
  charsetNamed,
  decodeValue,
  parseUrlEncoded,
  type RawPair,
  requestCharset,
} from './charset.ts';
import { boundaryOf, parseMultipart } from './multipart.ts';

/** The client's address, carried beside the parameters (a symbol: no parameter can be named so). */
export const CLIENT_ADDRESS: unique symbol = Symbol('client address');

/** Waits for the organisation's turn to answer the call (see TenantAdmission), once it is known who calls. */
export const TAKE_TURN: unique symbol = Symbol('take turn');

/** The parameters of a legacy call: query string and form fields, merged. */
export type LegacyParams = Record<string, string | undefined> & {
  [CLIENT_ADDRESS]?: string;
  [TAKE_TURN]?: (organisationId: string) => Promise<void>;
};

export const LEGACY_REF_CLIENT_MAX = 40;
export const LEGACY_MAX_GET_RECIPIENTS = 300;
export const LEGACY_MAX_POST_RECIPIENTS = 10_000;
export const LEGACY_DEFAULT_MAX_PARTS = 5;

/** A parameter's value; undefined when it is missing or blank. */
export function param(p: LegacyParams, name: string): string | undefined {
  const v = p[name];
  return v === undefined || v.trim() === '' ? undefined : v;
}

/** The multipart field that carries sendSMSBatch.do's file. */
export const FILE_FIELD = 'fichier';

/** A multipart body may carry a batch file of up to this many bytes. */
export const MULTIPART_BODY_LIMIT = 8 * 1024 * 1024;

const UTF8_BOM = [0xef, 0xbb, 0xbf];

/** Bodies these parsers made: the request's whole parameters, query string included. */
const decoded = new WeakSet<object>();

interface Source {
  pairs: RawPair[];
  /** How the source's values are read when the request does not say. */
  fallback: Charset;
}

/** The query string of a raw request URL, as the bytes the client sent. */
function queryBytes(url: string | undefined): Uint8Array {
  const q = url?.indexOf('?') ?? -1;
  return q < 0 ? new Uint8Array(0) : Buffer.from(url!.slice(q + 1), 'latin1');
}

/** The charset parameter of a Content-Type, as one Tern reads; `auto` when there is none or it is unknown. */
function contentTypeCharset(contentType: string | undefined): Charset {
  const m = /;\s*charset\s*=\s*("?)([^";\s]+)\1/i.exec(contentType ?? '');
  return (m && charsetNamed(m[2]!)) || 'auto';
}

/** The last value of an ASCII parameter (`charset`, `classe_msg`) across the sources; later sources win. */
function lastAscii(sources: Source[], name: string): string | undefined {
  let out: string | undefined;
  for (const s of sources) for (const p of s.pairs) if (asciiOf(p.name) === name) out = asciiOf(p.value);
  return out;
}

/**
 * The decoded parameters of the sources, in order: a later source's field wins over an earlier one's, and a name
 * repeated within one source has its values joined with commas.
 */
function decodeSources(sources: Source[]): Record<string, string> {
  const declared = { charset: lastAscii(sources, 'charset'), classe_msg: lastAscii(sources, 'classe_msg') };
  // No prototype: a parameter may be named `__proto__` or `toString`.
  const out: Record<string, string> = Object.create(null);
  for (const source of sources) {
    const { charset, why } = requestCharset(declared, source.fallback);
    const mine: Record<string, string> = Object.create(null);
    for (const pair of source.pairs) {
      const name = decodeValue(pair.name, 'auto', 'a parameter name');
      const value = decodeValue(pair.value, charset, name, why);
      mine[name] = name in mine ? `${mine[name]},${value}` : value;
    }
    Object.assign(out, mine);
  }
  return out;
}

/** A request with no body of ours (GET, or a JSON body): the query string, then the JSON fields, which are text already. */
function paramsOfQueryAndJson(req: FastifyRequest): Record<string, string> {
  const out = decodeSources([{ pairs: parseUrlEncoded(queryBytes(req.raw.url)), fallback: 'auto' }]);
  const body = req.body;
  if (body && typeof body === 'object') {
    for (const [k, v] of Object.entries(body as Record<string, unknown>)) {
      const value =
        typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : Array.isArray(v) ? v.map(String).join(',') : undefined;
      if (value === undefined) continue;
      const problem = unstorableText(k) ?? unstorableText(value);
      if (problem) fail('INVALID_REQUEST', problem, k);
      out[k] = value;
    }
  }
  return out;
}

/** The parameters of a legacy request (query string and body fields merged, a field winning), with the client's address. */
export function legacyParamsOf(req: FastifyRequest): LegacyParams {
  const body = req.body;
  const params: LegacyParams = body && typeof body === 'object' && decoded.has(body) ? { ...(body as Record<string, string>) } : paramsOfQueryAndJson(req);
  params[CLIENT_ADDRESS] = req.ip;
  return params;
}

function mark(params: Record<string, string>): Record<string, string> {
  decoded.add(params);
  return params;
}

/**
 * The charset to answer `req` in (see answerCharset): its `charset` parameter (a body's wins over the query
 * string's), its Content-Type's charset, else `operation`'s. It reads the raw request, so an answer to a request whose
 * parameters could not be read is written in the charset it asked for too.
 */
export function answerCharsetOf(req: FastifyRequest, operation: AnswerCharset): AnswerCharset {
  const body = req.body as Record<string, unknown> | undefined;
  let declared = body && typeof body === 'object' && typeof body.charset === 'string' ? body.charset : undefined;
  if (declared === undefined) for (const p of parseUrlEncoded(queryBytes(req.raw.url))) if (asciiOf(p.name) === 'charset') declared = asciiOf(p.value);
  const declaredByType = contentTypeCharset(req.headers['content-type']);
  return answerCharset(declared, declaredByType === 'auto' ? null : declaredByType, operation);
}

/** A form body: its fields with the query string's. */
function parseForm(req: FastifyRequest, body: Buffer): Record<string, string> {
  return mark(
    decodeSources([
      { pairs: parseUrlEncoded(queryBytes(req.raw.url)), fallback: 'auto' },
      { pairs: parseUrlEncoded(body), fallback: contentTypeCharset(req.headers['content-type']) },
    ]),
  );
}

/** A multipart body: its plain fields with the query string's, and the `fichier` file as text. */
function parseMultipartForm(req: FastifyRequest, body: Buffer): Record<string, string> {
  const boundary = boundaryOf(req.headers['content-type'] ?? '') ?? fail('INVALID_REQUEST', 'the multipart/form-data Content-Type has no boundary');
  const parts = parseMultipart(body, boundary);
  const fields = parts.filter((p) => p.filename === null);
  const files = parts.filter((p) => p.filename !== null);
  const sources: Source[] = [
    { pairs: parseUrlEncoded(queryBytes(req.raw.url)), fallback: 'auto' },
    ...fields.map((p) => ({ pairs: [{ name: Buffer.from(p.name, 'latin1'), value: p.data }], fallback: contentTypeCharset(p.contentType ?? undefined) })),
  ];
  const params = decodeSources(sources);
  for (const file of files) {
    if (file.name !== FILE_FIELD) fail('INVALID_REQUEST', `only the ${FILE_FIELD} part may be a file`, file.name);
    const bom = UTF8_BOM.every((b, i) => file.data[i] === b);
    const { charset, why } = bom
      ? { charset: 'utf-8' as const, why: 'the file starts with a UTF-8 byte order mark' }
      : requestCharset(
          { charset: lastAscii(sources, 'charset'), classe_msg: lastAscii(sources, 'classe_msg') },
          contentTypeCharset(file.contentType ?? undefined),
        );
    params[FILE_FIELD] = decodeValue(bom ? file.data.subarray(3) : file.data, charset, FILE_FIELD, why);
  }
  return mark(params);
}

/**
 * Registers the legacy body parsers in `scope` (its routes only: the JSON routes keep answering 415 to forms). A POST
 * without a body has its parameters in the query string: its body is an empty form.
 */
export function registerLegacyBodyParsers(scope: FastifyInstance): void {
  scope.addHook('preValidation', async (req) => {
    if (req.method === 'POST' && req.body === undefined) req.body = {};
  });
  scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'buffer' }, async (req: FastifyRequest, body: Buffer) => parseForm(req, body));
  scope.addContentTypeParser('multipart/form-data', { parseAs: 'buffer' }, async (req: FastifyRequest, body: Buffer) => parseMultipartForm(req, body));
}
