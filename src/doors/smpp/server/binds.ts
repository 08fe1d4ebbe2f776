import { SmppStatus, str, type Pdu } from '../../../protocols/smpp/pdu.ts';
import type { RequestResult } from '../../../protocols/smpp/session.ts';
import type { BindMode, SmppPrincipal } from '../handler.ts';
import { type Conn, gone, hex, type ServerContext } from './context.ts';

/** A session bound on this node, as the operator API lists it. */
export interface SmppSessionInfo {
  principalKey: string;
  systemId: string;
  mode: BindMode;
  remoteAddress: string;
  secure: boolean;
  boundAt: number;
}

const BIND_MODE: Readonly<Record<string, BindMode>> = {
  bind_transmitter: 'transmitter',
  bind_receiver: 'receiver',
  bind_transceiver: 'transceiver',
};

function sessionsGauge<P extends SmppPrincipal>(ctx: ServerContext<P>, p: P): void {
  ctx.metric('smpp_sessions', { system_id: p.systemId }, ctx.byPrincipal.get(p.key)?.size ?? 0);
}

/**
 * Answers a bind: the credentials checked by the handler, then the principal's bind limit (counted for the cluster
 * when the handler claims binds); a bound connection joins its principal's sessions.
 */
export async function answerBind<P extends SmppPrincipal>(ctx: ServerContext<P>, conn: Conn<P>, pdu: Pdu): Promise<RequestResult> {
  const { handler, log } = ctx;
  const mode = BIND_MODE[pdu.command]!;
  const systemId = str(pdu, 'system_id');
  const result = await handler.bind({
    systemId,
    password: str(pdu, 'password'),
    systemType: str(pdu, 'system_type'),
    mode,
    remoteAddress: conn.session.remoteAddress,
  });
  if (!result.ok) {
    ctx.metric('smpp_bind_failures_total', { system_id: systemId, status: hex(result.status) });
    log.info({ systemId, mode, remote: conn.session.remoteAddress, status: hex(result.status) }, 'smpp bind refused');
    if (result.answerAfterMs) await new Promise((r) => setTimeout(r, result.answerAfterMs));
    // Closed once the answer is written: another guess needs another connection.
    if (result.close) setImmediate(() => void conn.session.close());
    return { status: result.status };
  }
  const p = result.principal;
  if (gone(ctx, conn)) return { status: SmppStatus.ESME_RBINDFAIL };
  const bound = ctx.byPrincipal.get(p.key) ?? new Set<Conn<P>>();
  if (bound.size >= p.maxBinds || (handler.claimBind && !(await handler.claimBind(p, conn.id)))) {
    ctx.metric('smpp_bind_failures_total', { system_id: p.systemId, status: hex(SmppStatus.ESME_RBINDFAIL) });
    log.info({ systemId, mode, maxBinds: p.maxBinds }, 'smpp bind refused: too many binds');
    return { status: SmppStatus.ESME_RBINDFAIL };
  }
  if (gone(ctx, conn)) {
    // Gone while its bind was being counted.
    handler.releaseBind?.(p, conn.id);
    return { status: SmppStatus.ESME_RBINDFAIL };
  }
  bound.add(conn);
  ctx.byPrincipal.set(p.key, bound);
  conn.principal = p;
  conn.mode = mode;
  if (p.window) conn.session.setWindow(p.window);
  conn.boundAt = ctx.now();
  ctx.metric('smpp_binds_total', { system_id: p.systemId, mode });
  sessionsGauge(ctx, p);
  log.info({ systemId, mode, remote: conn.session.remoteAddress }, 'smpp bound');
  return { fields: { system_id: ctx.systemId } };
}

/** A connection closed: it leaves its principal's sessions and gives its bind back. */
export function unbind<P extends SmppPrincipal>(ctx: ServerContext<P>, conn: Conn<P>, reason: string): void {
  ctx.conns.delete(conn);
  const p = conn.principal;
  if (!p) return;
  const bound = ctx.byPrincipal.get(p.key);
  bound?.delete(conn);
  if (bound && bound.size === 0) ctx.byPrincipal.delete(p.key);
  ctx.handler.releaseBind?.(p, conn.id);
  sessionsGauge(ctx, p);
  ctx.log.info({ systemId: p.systemId, mode: conn.mode, reason, secure: conn.secure }, 'smpp session closed');
}

/** Bound as receiver or transceiver: deliver_sm can go to it. */
export function receives<P>(conn: Conn<P>): boolean {
  return conn.session.state === 'BOUND_RX' || conn.session.state === 'BOUND_TRX';
}

export function receiverCount<P extends SmppPrincipal>(ctx: ServerContext<P>, principalKey: string): number {
  let n = 0;
  for (const c of ctx.byPrincipal.get(principalKey) ?? []) if (receives(c)) n++;
  return n;
}

export function sessionCount<P extends SmppPrincipal>(ctx: ServerContext<P>, principalKey?: string): number {
  if (principalKey !== undefined) return ctx.byPrincipal.get(principalKey)?.size ?? 0;
  let n = 0;
  for (const set of ctx.byPrincipal.values()) n += set.size;
  return n;
}

export function sessionsOf<P extends SmppPrincipal>(ctx: ServerContext<P>, principalKey?: string): SmppSessionInfo[] {
  const sets = principalKey !== undefined ? [ctx.byPrincipal.get(principalKey) ?? new Set<Conn<P>>()] : [...ctx.byPrincipal.values()];
  return sets.flatMap((set) =>
    [...set].map((c) => ({
      principalKey: c.principal!.key,
      systemId: c.principal!.systemId,
      mode: c.mode!,
      remoteAddress: c.session.remoteAddress,
      secure: c.secure === true,
      boundAt: c.boundAt!,
    })),
  );
}
