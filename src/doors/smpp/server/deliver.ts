import type { DeliverSmFields } from '../../../protocols/smpp/deliver-sm.ts';
import type { SmppSession } from '../../../protocols/smpp/session.ts';
import type { SmppPrincipal } from '../handler.ts';
import { receives } from './binds.ts';
import type { ServerContext } from './context.ts';

/**
 * deliver_sm toward a principal's receivers (receipts and MO): one bound receiver or transceiver session at a time,
 * round-robin; the PDUs of one call all go through the same session, in order. Resolves true only when every
 * deliver_sm_resp came back with status 0.
 */
export function delivery<P extends SmppPrincipal>(
  ctx: ServerContext<P>,
): (principalKey: string, pdus: DeliverSmFields | DeliverSmFields[]) => Promise<boolean> {
  const roundRobin = new Map<string, number>();

  async function deliverTo(session: SmppSession, pdus: DeliverSmFields[]): Promise<boolean> {
    for (const fields of pdus) {
      try {
        const resp = await session.request('deliver_sm', fields as Record<string, unknown>);
        if (resp.status !== 0 || resp.command !== 'deliver_sm_resp') return false;
      } catch (err) {
        ctx.log.debug({ err }, 'smpp deliver_sm failed');
        return false;
      }
    }
    return true;
  }

  return async (principalKey, pdus) => {
    const list = Array.isArray(pdus) ? pdus : [pdus];
    const receivers = [...(ctx.byPrincipal.get(principalKey) ?? [])].filter(receives);
    if (receivers.length === 0 || list.length === 0) return false;
    const turn = roundRobin.get(principalKey) ?? 0;
    roundRobin.set(principalKey, (turn + 1) % receivers.length);
    const conn = receivers[turn % receivers.length]!;
    const ok = await deliverTo(conn.session, list);
    const labels = { system_id: conn.principal!.systemId, outcome: ok ? 'ok' : 'failed' };
    ctx.metric('smpp_delivers_total', labels, list.length);
    return ok;
  };
}
