// The audit log reads an object's state before a change by asking the server itself for it (GET on the same path,
// as the same key). That read is made while the change holds its organisation's turn, so it must not wait for a turn
// of its own: it carries this header with a value only this process knows.
import { randomBytes } from 'node:crypto';
import type { FastifyRequest } from 'fastify';

export const AUDIT_READ_HEADER = 'x-tern-audit-read';
export const AUDIT_READ_TOKEN = randomBytes(24).toString('hex');

/** Whether a request is the audit log's own read of a state before a change. */
export function isAuditRead(req: FastifyRequest): boolean {
  return req.headers[AUDIT_READ_HEADER] === AUDIT_READ_TOKEN;
}
