import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';

/** Where `npm run build:console` writes the console (it runs on `npm ci` and `npm install`). */
export const CONSOLE_DIST = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'console', 'dist');

// The console talks to this origin's API only, runs no inline script and is never framed.
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "media-src 'self' blob:",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

const NOT_BUILT = `<!doctype html><meta charset="utf-8"><title>Tern console</title>
<p>The console is not built in this copy of Tern. Run <code>npm run build:console</code> (or <code>npm ci</code>, which
builds it) and reload this page. The API works meanwhile: <a href="/docs">/docs</a>.</p>`;

/**
 * The web console: static files under /console/, the same origin as the API it calls (with the key the person signs
 * in with, kept in the browser's session storage). Hashed assets are cached for good; the page itself never.
 */
export async function consoleRoutes(app: FastifyInstance, root = CONSOLE_DIST): Promise<void> {
  app.get('/', { schema: { hide: true } }, async (_req, reply) => reply.redirect('/console/'));
  app.get('/console', { schema: { hide: true } }, async (_req, reply) => reply.redirect('/console/'));
  if (!existsSync(join(root, 'index.html'))) {
    app.get('/console/*', { schema: { hide: true } }, async (_req, reply) =>
      reply.code(503).header('content-type', 'text/html; charset=utf-8').header('retry-after', '60').send(NOT_BUILT),
    );
    return;
  }
  await app.register(fastifyStatic, {
    root,
    prefix: '/console/',
    decorateReply: false,
    index: ['index.html'],
    cacheControl: false,
    setHeaders(res, path) {
      res.header('content-security-policy', CSP);
      res.header('x-content-type-options', 'nosniff');
      res.header('referrer-policy', 'no-referrer');
      res.header('cache-control', path.includes(`${join('dist', 'assets')}`) ? 'public, max-age=31536000, immutable' : 'no-cache');
    },
  });
}
