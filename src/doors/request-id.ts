import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** The header that carries a request's id, in the request (when the client or a proxy gives one) and in the answer. */
export const REQUEST_ID_HEADER = 'x-request-id';

/** An id a client may choose: printable, no spaces or quotes, short enough for a log line. */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

/**
 * The id of an HTTP request: the one its `X-Request-Id` header gives when it is sane (so a proxy's or a client's id
 * follows the request through Tern's logs), a new UUID otherwise (absent, repeated, too long, other characters).
 */
export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers[REQUEST_ID_HEADER];
  return typeof given === 'string' && SANE_REQUEST_ID.test(given) ? given : randomUUID();
}
