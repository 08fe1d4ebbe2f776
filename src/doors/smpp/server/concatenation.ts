import type { SmppPrincipal, SmppSubmitResult } from '../handler.ts';
import type { ServerContext } from './context.ts';
import { memoryReassembly, sharedReassembly, type ExpiredMessage, type Reassembly, type ReassemblyOptions, type WholeMessage } from './reassembly.ts';

export interface ConcatenationOptions {
  /** How long the parts of a concatenated message may take to arrive. */
  concatTimeoutMs?: number;
  /**
   * Concatenated messages being assembled at once, all credentials together: a bound on this server's memory, when
   * the handler keeps no parts itself (addConcatPart).
   */
  maxPendingConcat?: number;
  /** Octets of parts waiting for the rest of their message, all credentials together (in memory, as above). */
  maxConcatBytes?: number;
  /** Parts and octets one credential may have waiting; beyond, its parts get ESME_RMSGQFUL, nobody else's. */
  maxConcatPartsPerCredential?: number;
  maxConcatBytesPerCredential?: number;
  /** How often the sweep of concatenated messages kept by the handler looks on its own, when nothing says parts wait. */
  safetyPollMs?: number;
}

/** Submits a whole concatenated message with the id its parts were answered with. */
export async function submitWhole<P extends SmppPrincipal>(ctx: ServerContext<P>, p: P, whole: WholeMessage<P>): Promise<SmppSubmitResult> {
  const { meta } = whole;
  const r = await ctx.handler.submit(p, {
    ...meta.fields,
    destination: meta.destination,
    text: whole.text,
    parts: whole.total,
    messageId: whole.messageId,
  });
  if ('messageId' in r) ctx.metric('smpp_submits_total', { system_id: p.systemId });
  return r;
}

/**
 * Where the parts of concatenated submits wait for the rest of their message: in the handler's shared store when it
 * keeps parts (every node sees every part), else in this server's memory. A message given up is reported to the
 * handler; one made whole on a node that stopped before storing it is submitted from here.
 */
export function concatenation<P extends SmppPrincipal>(ctx: ServerContext<P>, options: ConcatenationOptions): Reassembly<P> {
  const { handler, log } = ctx;

  function concatExpired({ messageId, received, total, meta }: ExpiredMessage<P>): void {
    const { principal, fields, destination } = meta;
    log.info({ systemId: principal.systemId, messageId, received, total }, 'smpp concatenated message expired');
    ctx.metric('smpp_errors_total', { system_id: principal.systemId, command: 'submit_sm', reason: 'concat_expired' });
    try {
      handler.concatExpired?.(principal, { messageId, source: fields.source, destination, received, total });
    } catch (err) {
      log.error({ err, messageId }, 'smpp concatExpired handler failed');
    }
  }

  /** A whole message whose node never stored it: nobody waits for its answer, its parts were answered already. */
  async function submitStranded(whole: WholeMessage<P>): Promise<void> {
    const p = whole.meta.principal;
    try {
      const r = await submitWhole(ctx, p, whole);
      log.info(
        { systemId: p.systemId, messageId: whole.messageId, ...r },
        'smpp concatenated message taken over from the node that made it whole, and submitted',
      );
    } catch (err) {
      log.error({ err, systemId: p.systemId, messageId: whole.messageId }, 'smpp concatenated message could not be stored; trying again later');
    }
  }

  const reassemblyOptions: ReassemblyOptions = {
    now: ctx.now,
    ...(options.concatTimeoutMs !== undefined && { timeoutMs: options.concatTimeoutMs }),
    ...(options.maxPendingConcat !== undefined && { maxPending: options.maxPendingConcat }),
    ...(options.maxConcatBytes !== undefined && { maxBytes: options.maxConcatBytes }),
    ...(options.maxConcatPartsPerCredential !== undefined && { maxPartsPerOwner: options.maxConcatPartsPerCredential }),
    ...(options.maxConcatBytesPerCredential !== undefined && { maxBytesPerOwner: options.maxConcatBytesPerCredential }),
    ...(options.safetyPollMs !== undefined && { safetyPollMs: options.safetyPollMs }),
  };

  const { addConcatPart, takeExpiredConcat, takeStrandedConcat, nextConcatSweep } = handler;
  return addConcatPart && takeExpiredConcat && takeStrandedConcat && nextConcatSweep
    ? sharedReassembly<P>(
        {
          addConcatPart: addConcatPart.bind(handler),
          takeExpiredConcat: takeExpiredConcat.bind(handler),
          takeStrandedConcat: takeStrandedConcat.bind(handler),
          nextConcatSweep: nextConcatSweep.bind(handler),
        },
        reassemblyOptions,
        concatExpired,
        submitStranded,
        (err) => log.error({ err }, 'smpp: expiring or recovering concatenated messages failed; trying again'),
      )
    : memoryReassembly<P>(reassemblyOptions, () => handler.allocateMessageId(), concatExpired);
}
