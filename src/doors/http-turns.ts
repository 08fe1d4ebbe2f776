// The turns of the HTTP doors' requests (REST and legacy HTTP, one server): see TenantAdmission.
import type { ServerResponse } from 'node:http';
import type { FastifyRequest } from 'fastify';
import type { Services } from '../core/services.ts';
import { isAuditRead } from './audit-read.ts';

/** A request's turn among its organisation's (TenantAdmission): ended when its response is sent or its client goes. */
interface Turn {
  end: (() => void) | null;
  closed: boolean;
}

const TURNS = new WeakMap<FastifyRequest, Turn>();

/** Every request of the HTTP server: its turn, once taken, ends with its response (answered, failed or abandoned). */
export function watchTurn(req: FastifyRequest, res: ServerResponse): void {
  const turn: Turn = { end: null, closed: false };
  TURNS.set(req, turn);
  res.once('close', () => {
    turn.closed = true;
    turn.end?.();
    turn.end = null;
  });
}

/** Waits for the organisation's turn to answer this request (once per request; REST and legacy HTTP alike). */
export async function takeTurn(services: Services, req: FastifyRequest, organisationId: string): Promise<void> {
  const turn = TURNS.get(req);
  if (!turn || turn.end || turn.closed || isAuditRead(req)) return;
  const end = await services.admission.enter(organisationId);
  if (turn.closed) end();
  else turn.end = end;
}
