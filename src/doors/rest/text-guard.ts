import type { FastifyInstance } from 'fastify';
import { CoreError } from '../../core/errors.ts';
import { findUnstorableText } from '../../domain/text-safety.ts';

/**
 * Refuses, before anything else reads them, requests whose path parameters, query or body hold text that cannot be
 * stored as given (a NUL character, half a surrogate pair): a 400 naming the field, instead of a database error that
 * would fail other requests' batch with it. The legacy door checks its own parameters, in its own format.
 */
export function registerTextGuard(app: FastifyInstance, skip: (url: string) => boolean): void {
  app.addHook('preValidation', (req, _reply, done) => {
    if (skip(req.url)) return done();
    const found = findUnstorableText(req.params, 'path') ?? findUnstorableText(req.query, 'query') ?? findUnstorableText(req.body, 'body');
    done(found ? new CoreError('INVALID_REQUEST', found.reason, found.path) : undefined);
  });
}
