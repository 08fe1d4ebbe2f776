import { CONCAT_DEFAULTS, ConcatAssembler, concatKey, joinPartsText, type ConcatRef } from '../../../protocols/smpp/concat.ts';
import type { SmppAddress, SubmitFields } from '../../../protocols/smpp/submit.ts';
import { Loop } from '../../../workers/loop.ts';
import type { SmppConcatBudget, SmppConcatStranded, SmppHandler, SmppPrincipal } from '../handler.ts';

/**
 * Where the SMPP server keeps the parts of concatenated submits until their message is whole: in the handler's
 * shared store when it has one (every node sees every part, so a customer may spread a message over binds on several
 * nodes), else in this server's memory.
 */

/** What the server needs of a message's part when the message is whole or given up. */
export interface ConcatMeta<P> {
  principal: P;
  fields: SubmitFields;
  destination: SmppAddress;
}

/** A message made whole, to submit with the id its parts were answered with. */
export interface WholeMessage<P> {
  messageId: string;
  text: string;
  total: number;
  meta: ConcatMeta<P>;
}

export type ReassemblyOutcome<P> =
  | { kind: 'partial' | 'duplicate' | 'inconsistent'; messageId: string }
  | ({ kind: 'complete' } & WholeMessage<P>)
  /** Refused for room: all principals together (full) or this one (over-budget); `load` says how much waits. */
  | { kind: 'full' | 'over-budget'; load: Record<string, number> }
  | { kind: 'refused'; status: number };

export interface ExpiredMessage<P> {
  messageId: string;
  received: number;
  total: number;
  meta: ConcatMeta<P>;
}

export interface Reassembly<P> {
  add(principal: P, concat: ConcatRef, payload: Buffer, meta: ConcatMeta<P>): Promise<ReassemblyOutcome<P>>;
  start(): void;
  /** Looks at once for messages given up or stranded (another node stopped: the parts it kept are this node's too). */
  sweep(): void;
  /** Stops expiring; parts kept in memory are dropped, parts kept in the shared store stay for the other nodes. */
  close(): Promise<void>;
}

export interface ReassemblyOptions {
  timeoutMs?: number;
  /** In memory only: messages and octets waiting, all principals together. */
  maxPending?: number;
  maxBytes?: number;
  maxPartsPerOwner?: number;
  maxBytesPerOwner?: number;
  now: () => number;
  /** Shared store: how often the sweep looks on its own when nothing tells it parts are waiting. */
  safetyPollMs?: number;
}

export function memoryReassembly<P extends SmppPrincipal>(
  options: ReassemblyOptions,
  allocateMessageId: () => string,
  onExpire: (expired: ExpiredMessage<P>) => void,
): Reassembly<P> {
  const assembler = new ConcatAssembler<ConcatMeta<P>>({
    allocateMessageId,
    ...(options.timeoutMs !== undefined && { timeoutMs: options.timeoutMs }),
    ...(options.maxPending !== undefined && { maxPending: options.maxPending }),
    ...(options.maxBytes !== undefined && { maxBytes: options.maxBytes }),
    ...(options.maxPartsPerOwner !== undefined && { maxPartsPerOwner: options.maxPartsPerOwner }),
    ...(options.maxBytesPerOwner !== undefined && { maxBytesPerOwner: options.maxBytesPerOwner }),
    onExpire: ({ messageId, received, total, meta }) => onExpire({ messageId, received, total, meta }),
  });
  return {
    async add(p, concat, payload, meta): Promise<ReassemblyOutcome<P>> {
      const key = concatKey(p.key, meta.fields.source.addr, meta.destination.addr, concat.ref);
      const added = assembler.add(key, concat, payload, meta.fields.dataCoding, meta, p.key);
      switch (added.kind) {
        case 'full':
          return { kind: 'full', load: { pending: assembler.size, bytes: assembler.pendingBytes } };
        case 'over-budget':
          return { kind: 'over-budget', load: { ...assembler.usageOf(p.key) } };
        case 'partial':
          return { kind: 'partial', messageId: added.messageId };
        default:
          return added;
      }
    },
    start() {},
    sweep() {},
    async close() {
      assembler.clear();
    },
  };
}

type SharedStore<P extends SmppPrincipal> = Required<Pick<SmppHandler<P>, 'addConcatPart' | 'takeExpiredConcat' | 'takeStrandedConcat' | 'nextConcatSweep'>>;

/** How often the shared store's sweep looks on its own, by default, when no part is known to wait. */
const SWEEP_SAFETY_POLL_MS = 30_000;

/**
 * `onStranded` submits a whole message another node took and never stored (it stopped, or failed): this node took it
 * over. It handles its own failures (the message is taken over again later).
 */
export function sharedReassembly<P extends SmppPrincipal>(
  store: SharedStore<P>,
  options: ReassemblyOptions,
  onExpire: (expired: ExpiredMessage<P>) => void,
  onStranded: (whole: WholeMessage<P>) => Promise<void>,
  onError: (err: unknown) => void,
): Reassembly<P> {
  const timeoutMs = options.timeoutMs ?? CONCAT_DEFAULTS.timeoutMs;
  const budget: SmppConcatBudget = {
    maxParts: options.maxPartsPerOwner ?? CONCAT_DEFAULTS.maxPartsPerOwner,
    maxBytes: options.maxBytesPerOwner ?? CONCAT_DEFAULTS.maxBytesPerOwner,
  };
  // Every node looks for messages given up, whichever node their parts reached (that node may be gone), and stores
  // the whole messages a node took and never stored: when the next of them falls due, and while parts wait, every
  // tenth of the timeout too (their times come from the clocks of the nodes that received them). With no part
  // waiting it sleeps, until a part arrives here, another node stops, or its own slow poll.
  const sweepEveryMs = Math.min(5_000, Math.max(50, Math.round(timeoutMs / 10)));
  const sweep = new Loop(
    async () => {
      const now = options.now();
      const due = await store.nextConcatSweep();
      if (due === null) return null;
      if (due > now) return Math.min(due, now + sweepEveryMs);
      for (const e of await store.takeExpiredConcat(now)) {
        onExpire({ messageId: e.messageId, received: e.received, total: e.total, meta: decodeMeta<P>(e.meta) });
      }
      for (const s of await store.takeStrandedConcat(now)) await onStranded(wholeMessage<P>(s));
      return options.now() + sweepEveryMs;
    },
    options.safetyPollMs ?? SWEEP_SAFETY_POLL_MS,
    onError,
  );
  return {
    async add(p, concat, payload, meta) {
      const received = options.now();
      const added = await store.addConcatPart(
        p,
        {
          source: meta.fields.source.addr,
          destination: meta.destination.addr,
          ref: concat.ref,
          total: concat.total,
          seq: concat.seq,
          payload,
          dataCoding: meta.fields.dataCoding,
          meta: encodeMeta(meta),
          expiresAt: received + timeoutMs,
        },
        budget,
      );
      // Parts wait: the sweep looks at them from now on.
      if (added.kind === 'partial' || added.kind === 'complete') sweep.at(received + sweepEveryMs);
      switch (added.kind) {
        case 'complete':
          return { kind: 'complete', ...wholeMessage<P>(added) };
        case 'over-budget':
          return { kind: 'over-budget', load: { parts: added.parts, bytes: added.bytes } };
        default:
          return added;
      }
    },
    start() {
      sweep.start();
    },
    sweep() {
      sweep.wake();
    },
    close() {
      return sweep.stop();
    },
  };
}

function wholeMessage<P>(m: SmppConcatStranded): WholeMessage<P> {
  return { messageId: m.messageId, text: joinPartsText(m.parts), total: m.parts.length, meta: decodeMeta<P>(m.meta) };
}

function encodeMeta<P>(meta: ConcatMeta<P>): string {
  const { scheduleAt, validUntil } = meta.fields;
  return JSON.stringify({
    ...meta,
    fields: { ...meta.fields, scheduleAt: scheduleAt?.getTime() ?? null, validUntil: validUntil?.getTime() ?? null },
  });
}

function decodeMeta<P>(text: string): ConcatMeta<P> {
  type Stored = Omit<ConcatMeta<P>, 'fields'> & {
    fields: Omit<SubmitFields, 'scheduleAt' | 'validUntil'> & { scheduleAt: number | null; validUntil: number | null };
  };
  const meta = JSON.parse(text) as Stored;
  const { scheduleAt, validUntil } = meta.fields;
  return {
    ...meta,
    fields: { ...meta.fields, scheduleAt: scheduleAt === null ? null : new Date(scheduleAt), validUntil: validUntil === null ? null : new Date(validUntil) },
  };
}
