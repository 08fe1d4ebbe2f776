/**
 * The one `multipart/form-data` body the legacy interface takes: sendSMSBatch.do's form with its `fichier` (a CSV
 * file) and, perhaps, other fields. Parts are kept as bytes; the caller decides how to read them.
 */
import { fail } from '../../core/errors.ts';

export interface MultipartPart {
  name: string;
  /** The `filename` of a file part; null for a plain field. */
  filename: string | null;
  /** The part's own Content-Type, if it has one. */
  contentType: string | null;
  data: Uint8Array;
}

export const MAX_MULTIPART_PARTS = 100;

/** The `boundary` parameter of a multipart Content-Type, or null. */
export function boundaryOf(contentType: string): string | null {
  const m = /;\s*boundary\s*=\s*(?:"([^"]{1,70})"|([^;\s]{1,70}))/i.exec(contentType);
  return m ? (m[1] ?? m[2] ?? null) : null;
}

/** `name=value` parameters after the first `;` of a header value; quoted values unquoted. */
export function headerParams(value: string): Map<string, string> {
  const out = new Map<string, string>();
  const re = /;\s*([^=;\s]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;]*))/g;
  for (let m = re.exec(value); m; m = re.exec(value)) {
    out.set(m[1]!.toLowerCase(), m[2] !== undefined ? m[2].replace(/\\(.)/g, '$1') : m[3]!.trim());
  }
  return out;
}

const CRLF = Buffer.from('\r\n');
const HEADERS_END = Buffer.from('\r\n\r\n');

function malformed(why: string): never {
  return fail('INVALID_REQUEST', `the multipart/form-data body is malformed: ${why}`);
}

/** The parts of a multipart body, in order. A malformed body is an error of the request. */
export function parseMultipart(body: Buffer, boundary: string): MultipartPart[] {
  const delimiter = Buffer.from(`--${boundary}`);
  const next = Buffer.from(`\r\n--${boundary}`);
  let pos = body.indexOf(delimiter);
  if (pos < 0) malformed(`no part starts with the boundary "${boundary}"`);
  pos += delimiter.length;
  const parts: MultipartPart[] = [];
  for (;;) {
    if (body[pos] === 0x2d && body[pos + 1] === 0x2d) return parts;
    while (body[pos] === 0x20 || body[pos] === 0x09) pos++;
    if (!body.subarray(pos, pos + 2).equals(CRLF)) malformed('a boundary line does not end with CRLF');
    pos += 2;
    if (parts.length === MAX_MULTIPART_PARTS) malformed(`more than ${MAX_MULTIPART_PARTS} parts`);
    const headersEnd = body.indexOf(HEADERS_END, pos - 2);
    if (headersEnd < 0) malformed('a part has no end of headers');
    const headers = new Map<string, string>();
    for (const line of body.subarray(pos, headersEnd).toString('latin1').split('\r\n')) {
      if (line === '') continue;
      const colon = line.indexOf(':');
      if (colon <= 0) malformed(`a part header is not "Name: value": "${line.slice(0, 60)}"`);
      headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
    }
    const disposition = headers.get('content-disposition');
    if (!disposition || !/^form-data\s*(;|$)/i.test(disposition)) malformed('a part has no Content-Disposition: form-data header');
    const params = headerParams(disposition);
    const name = params.get('name');
    if (name === undefined || name === '') malformed('a part has no name');
    const start = headersEnd + HEADERS_END.length;
    const end = body.indexOf(next, start);
    if (end < 0) malformed(`the part "${name}" does not end with a boundary`);
    parts.push({ name, filename: params.get('filename') ?? null, contentType: headers.get('content-type') ?? null, data: body.subarray(start, end) });
    pos = end + next.length;
  }
}
