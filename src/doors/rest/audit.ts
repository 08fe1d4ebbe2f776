import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type AuditedAction, auditedAction, createdId, isAuditedChange } from '../../domain/audit.ts';
import type { Services } from '../../core/services.ts';
import { AUDIT_READ_HEADER, AUDIT_READ_TOKEN } from '../audit-read.ts';
import { actorOf } from './access.ts';

/** The client's own name for itself (`X-Tern-Client`): the console and the `tern` command say who they are. */
function interfaceOf(req: FastifyRequest): 'REST' | 'CONSOLE' | 'CLI' {
  const v = String(req.headers['x-tern-client'] ?? '').toLowerCase();
  return v === 'console' ? 'CONSOLE' : v === 'cli' ? 'CLI' : 'REST';
}

function json(text: string | undefined): unknown {
  if (!text) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

interface Pending {
  spec: AuditedAction;
  before: unknown;
}

/**
 * The one place that records the audit log of the HTTP API: every change made through a management route (the
 * operator's `/admin/v1`, the organisations' `/commons/v1` and templates; the console and the CLI call the same
 * routes) leaves one entry, written before its answer is sent. Its state before is what a GET of the same path
 * answered just before the change; its state after is the change's answer (none for a deletion).
 */
export function auditHooks(app: FastifyInstance, services: Services): void {
  const pending = new WeakMap<FastifyRequest, Pending>();

  const before = async (req: FastifyRequest) => {
    const pattern = req.routeOptions.url;
    if (!pattern || !isAuditedChange(req.method, pattern)) return;
    const spec = auditedAction(req.method, pattern);
    let state: unknown = null;
    if (spec.hasBefore && app.hasRoute({ method: 'GET', url: pattern })) {
      // Read as the change's author: their key, or their console session.
      const key = req.headers['x-api-key'];
      const cookie = req.headers.cookie;
      const read = await app.inject({
        method: 'GET',
        url: req.url.split('?')[0]!,
        headers: { ...(key !== undefined && { 'x-api-key': key }), ...(cookie !== undefined && { cookie }), [AUDIT_READ_HEADER]: AUDIT_READ_TOKEN },
      });
      if (read.statusCode === 200) state = json(read.body);
    }
    pending.set(req, { spec, before: state });
  };

  const record = async (req: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const p = pending.get(req);
    pending.delete(req);
    const who = actorOf(req);
    if (!p || !who || reply.statusCode >= 400) return payload;
    const params = (req.params ?? {}) as Record<string, string>;
    const answer = typeof payload === 'string' ? json(payload) : null;
    const after = req.method === 'DELETE' ? null : answer;
    const objectId = (p.spec.objectParam ? params[p.spec.objectParam] : undefined) ?? createdId(p.spec.objectType, answer);
    try {
      await services.audit.record({
        organisationId: who.organisationId ?? (await organisationOf(services, req.routeOptions.url ?? '', params, answer, p.before)),
        actor: who.actor,
        action: p.spec.action,
        objectType: p.spec.objectType,
        objectId: objectId ?? null,
        before: p.before,
        after,
        remoteAddress: req.ip ?? null,
        requestId: String(req.id),
        interface: interfaceOf(req),
      });
    } catch (err) {
      // The change is made and cannot be taken back: its answer goes out, the missing entry is an error in the log.
      req.log.error({ err, action: p.spec.action }, 'the audit entry of a change could not be written');
    }
    return payload;
  };

  // Only the routes that change something get the hooks: the rest of the API pays nothing for the log.
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (!methods.some((m) => isAuditedChange(m, route.url))) return;
    const asList = <T>(h: T | T[] | undefined): T[] => (h === undefined ? [] : Array.isArray(h) ? h : [h]);
    route.preHandler = [...asList(route.preHandler), before] as typeof route.preHandler;
    route.onSend = [...asList(route.onSend), record] as typeof route.onSend;
  });
}

/** The organisation an operator's change is about: named in the path, through its channel, or in the answer. */
async function organisationOf(services: Services, pattern: string, params: Record<string, string>, answer: unknown, before: unknown): Promise<string | null> {
  if (/\/organisations\/:id(\/|$)/.test(pattern) && params.id) return params.id;
  if (/\/channels\/:id(\/|$)/.test(pattern) && params.id) return (await services.tenancy.getChannel(params.id).catch(() => null))?.organisationId ?? null;
  for (const state of [answer, before]) {
    if (state && typeof state === 'object' && typeof (state as { organisationId?: unknown }).organisationId === 'string') {
      return (state as { organisationId: string }).organisationId;
    }
  }
  return null;
}
