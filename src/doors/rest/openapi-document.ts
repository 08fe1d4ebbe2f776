import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** The OpenAPI document as sent: its JSON once, gzipped once, and their entity tag. */
interface Rendered {
  json: Buffer;
  gzip: Buffer;
  etag: string;
}

/** How long clients and caches may keep the document without asking again (it changes only with a new version). */
const MAX_AGE_SECONDS = 300;

/**
 * Serves the OpenAPI document from buffers made on its first request, once every route is registered: the document
 * (about 0.5 MB) is not rendered again for each request, a client that has it gets `304 Not Modified` for its
 * `If-None-Match`, and one that takes gzip gets a tenth of the bytes — which matters most to the slow readers, whose
 * answers stay in memory until they are read.
 */
export function openApiDocumentHandler(document: () => unknown): (req: FastifyRequest, reply: FastifyReply) => FastifyReply {
  let rendered: Rendered | null = null;
  return (req, reply) => {
    rendered ??= render(document());
    reply.header('etag', rendered.etag).header('cache-control', `public, max-age=${MAX_AGE_SECONDS}`).header('vary', 'accept-encoding');
    if (matches(req.headers['if-none-match'], rendered.etag)) return reply.code(304).send();
    reply.header('content-type', 'application/json; charset=utf-8');
    if (acceptsGzip(req.headers['accept-encoding'])) return reply.header('content-encoding', 'gzip').send(rendered.gzip);
    return reply.send(rendered.json);
  };
}

function render(document: unknown): Rendered {
  const json = Buffer.from(JSON.stringify(document));
  return { json, gzip: gzipSync(json), etag: `"${createHash('sha256').update(json).digest('base64url').slice(0, 27)}"` };
}

/** `If-None-Match`: a list of tags (weak ones compare by their opaque part), or `*`. */
function matches(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  return header.split(',').some((t) => {
    const tag = t.trim();
    return tag === '*' || tag.replace(/^W\//, '') === etag;
  });
}

/** Whether `Accept-Encoding` takes gzip: named (or `*`) and not with `q=0`. */
export function acceptsGzip(header: string | undefined): boolean {
  if (!header) return false;
  for (const part of header.toLowerCase().split(',')) {
    const [coding, ...params] = part.trim().split(';');
    if (coding !== 'gzip' && coding !== 'x-gzip' && coding !== '*') continue;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    if (q === undefined || Number(q.slice(2)) > 0) return true;
  }
  return false;
}
