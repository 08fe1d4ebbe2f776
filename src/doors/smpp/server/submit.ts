import { formatSmppTime } from '../../../protocols/smpp/receipt.ts';
import { decodeGsm7, decodeSmppText } from '../../../domain/text.ts';
import { SmppStatus, str, type Pdu, type UnsuccessSme } from '../../../protocols/smpp/pdu.ts';
import type { RequestResult } from '../../../protocols/smpp/session.ts';
import { decodeSubmit, destinationOf, multiDestinations } from '../../../protocols/smpp/submit.ts';
import { TokenBucket } from '../../../protocols/smpp/token-bucket.ts';
import type { SmppPrincipal, SmppSubmitResult } from '../handler.ts';
import { submitWhole } from './concatenation.ts';
import type { ServerContext } from './context.ts';
import type { Reassembly } from './reassembly.ts';

/** What a bound client asks of its messages, by command: answered through the handler. */
export type MessageCommands<P> = ReadonlyMap<string, (p: P, pdu: Pdu) => Promise<RequestResult>>;

/**
 * submit_sm (a concatenated message's parts through the reassembly), submit_multi, query_sm, cancel_sm and
 * replace_sm, decoded into the handler's plain objects; the principal's submit rate is enforced here.
 */
export function messageCommands<P extends SmppPrincipal>(ctx: ServerContext<P>, reassembly: Reassembly<P>): MessageCommands<P> {
  const { handler, log, now } = ctx;
  const buckets = new Map<string, TokenBucket>();

  async function throttled(p: P, n: number): Promise<boolean> {
    if (!(p.tps > 0)) return false;
    let over: boolean;
    if (handler.overRate) {
      over = await handler.overRate(p, n);
    } else {
      let bucket = buckets.get(p.key);
      if (!bucket || bucket.rate !== p.tps) {
        bucket = new TokenBucket(p.tps, p.tps, now());
        buckets.set(p.key, bucket);
      }
      over = !bucket.tryTake(n, now());
    }
    if (over) ctx.metric('smpp_throttled_total', { system_id: p.systemId }, n);
    return over;
  }

  function submitResult(r: SmppSubmitResult, messageId?: string): RequestResult {
    if ('status' in r) return { status: r.status };
    return { fields: { message_id: messageId ?? r.messageId } };
  }

  async function onSubmitSm(p: P, pdu: Pdu): Promise<RequestResult> {
    if (await throttled(p, 1)) return { status: SmppStatus.ESME_RTHROTTLED };
    const decoded = decodeSubmit(pdu, new Date(now()));
    if (!decoded.ok) {
      log.debug({ systemId: p.systemId, reason: decoded.reason }, 'smpp submit_sm refused');
      return { status: decoded.status };
    }
    const { fields, payload, concat } = decoded.submit;
    const destination = destinationOf(pdu);
    if (!destination.addr) return { status: SmppStatus.ESME_RINVDSTADR };
    ctx.metric('smpp_submit_parts_total', { system_id: p.systemId });
    if (!concat) {
      const text = decodeSmppText(payload, fields.dataCoding);
      const r = await handler.submit(p, { ...fields, destination, text, parts: 1 });
      if ('messageId' in r) ctx.metric('smpp_submits_total', { system_id: p.systemId });
      return submitResult(r);
    }
    const added = await reassembly.add(p, concat, payload, { principal: p, fields, destination });
    switch (added.kind) {
      case 'full':
        log.warn({ systemId: p.systemId, ...added.load }, 'smpp reassembly table full');
        ctx.metric('smpp_errors_total', { system_id: p.systemId, command: 'submit_sm', reason: 'concat_full' });
        return { status: SmppStatus.ESME_RMSGQFUL };
      case 'over-budget':
        log.warn({ systemId: p.systemId, ...added.load }, 'smpp credential has as many parts waiting as it may');
        ctx.metric('smpp_errors_total', { system_id: p.systemId, command: 'submit_sm', reason: 'concat_budget' });
        return { status: SmppStatus.ESME_RMSGQFUL };
      case 'inconsistent':
        return { status: SmppStatus.ESME_RSUBMITFAIL };
      case 'refused':
        return { status: added.status };
      case 'partial':
      case 'duplicate':
        return { fields: { message_id: added.messageId } };
      case 'complete':
        return submitResult(await submitWhole(ctx, p, added), added.messageId);
    }
  }

  async function onSubmitMulti(p: P, pdu: Pdu): Promise<RequestResult> {
    const dests = multiDestinations(pdu);
    if (dests.length === 0) return { status: SmppStatus.ESME_RINVNUMDESTS };
    if (await throttled(p, dests.length)) return { status: SmppStatus.ESME_RTHROTTLED };
    const decoded = decodeSubmit(pdu, new Date(now()));
    if (!decoded.ok) return { status: decoded.status };
    const { fields, payload, concat } = decoded.submit;
    // One submit_multi_resp message_id cannot stand for a message reassembled per destination.
    if (concat) return { status: SmppStatus.ESME_RINVESMCLASS };
    const text = decodeSmppText(payload, fields.dataCoding);
    ctx.metric('smpp_submit_parts_total', { system_id: p.systemId }, dests.length);
    const outcomes = await Promise.all(
      dests.map(async (d): Promise<{ id?: string; failure?: UnsuccessSme }> => {
        if (d.dl_name !== undefined || !d.destination_addr) {
          const failure = {
            dest_addr_ton: 0,
            dest_addr_npi: 0,
            destination_addr: d.dl_name ?? '',
            error_status_code: d.dl_name !== undefined ? SmppStatus.ESME_RINVDLNAME : SmppStatus.ESME_RINVDSTADR,
          };
          return { failure };
        }
        const destination = { addr: d.destination_addr, ton: d.dest_addr_ton ?? 0, npi: d.dest_addr_npi ?? 0 };
        let status: number;
        try {
          const r = await handler.submit(p, { ...fields, destination, text, parts: 1 });
          if ('messageId' in r) {
            ctx.metric('smpp_submits_total', { system_id: p.systemId });
            return { id: r.messageId };
          }
          status = r.status;
        } catch (err) {
          log.error({ err, systemId: p.systemId }, 'smpp submit handler failed');
          status = SmppStatus.ESME_RSYSERR;
        }
        const failure = {
          dest_addr_ton: destination.ton,
          dest_addr_npi: destination.npi,
          destination_addr: destination.addr,
          error_status_code: status,
        };
        return { failure };
      }),
    );
    const firstId = outcomes.find((o) => o.id)?.id;
    const failures = outcomes.flatMap((o) => (o.failure ? [o.failure] : []));
    if (!firstId) return { status: failures[0]!.error_status_code };
    return { fields: { message_id: firstId, unsuccess_sme: failures } };
  }

  async function onQuery(p: P, pdu: Pdu): Promise<RequestResult> {
    if (!handler.query) return { status: SmppStatus.ESME_RQUERYFAIL };
    const source = { addr: str(pdu, 'source_addr'), ton: 0, npi: 0 };
    const r = await handler.query(p, { messageId: str(pdu, 'message_id'), source });
    if ('status' in r) return { status: r.status };
    return {
      fields: {
        message_id: r.messageId,
        final_date: r.finalDate ? formatSmppTime(r.finalDate) : '',
        message_state: r.state,
        error_code: r.errorCode,
      },
    };
  }

  async function onCancel(p: P, pdu: Pdu): Promise<RequestResult> {
    if (!handler.cancel) return { status: SmppStatus.ESME_RCANCELFAIL };
    const r = await handler.cancel(p, {
      messageId: str(pdu, 'message_id'),
      serviceType: str(pdu, 'service_type'),
      source: { addr: str(pdu, 'source_addr'), ton: 0, npi: 0 },
      destination: destinationOf(pdu),
    });
    return { status: r.status };
  }

  async function onReplace(p: P, pdu: Pdu): Promise<RequestResult> {
    if (!handler.replace) return { status: SmppStatus.ESME_RREPLACEFAIL };
    const decoded = decodeSubmit(pdu, new Date(now()));
    if (!decoded.ok) return { status: decoded.status };
    const { fields, payload } = decoded.submit;
    const r = await handler.replace(p, {
      messageId: str(pdu, 'message_id'),
      source: fields.source,
      shortMessage: payload,
      text: decodeGsm7(payload),
      scheduleAt: fields.scheduleAt,
      validUntil: fields.validUntil,
      registeredDelivery: fields.registeredDelivery,
    });
    return { status: r.status };
  }

  return new Map([
    ['submit_sm', onSubmitSm],
    ['submit_multi', onSubmitMulti],
    ['query_sm', onQuery],
    ['cancel_sm', onCancel],
    ['replace_sm', onReplace],
  ]);
}
