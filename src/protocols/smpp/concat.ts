import { decodeSmppText } from '../../core/domain/text.ts';

/**
 * Reassembly of concatenated submits. A customer sends a long text as several submit_sm, tied together by a UDH
 * concatenation IE (8- or 16-bit reference) or the sar_* TLVs. The parts may arrive in any order, over any bind
 * of the same credential; the message is accepted (and counted, and billed) once, when the last part arrives.
 * Every part is answered with the same message id, allocated when the first part arrives.
 */

export interface ConcatRef {
  ref: number;
  total: number;
  /** 1-based. */
  seq: number;
}

/** One assembly per (credential, source, destination, reference). */
export function concatKey(principalKey: string, source: string, destination: string, ref: number): string {
  return `${principalKey}\u0000${source}\u0000${destination}\u0000${ref}`;
}

export type ConcatAddResult<M> =
  | { kind: 'partial'; messageId: string; received: number; total: number }
  | { kind: 'duplicate'; messageId: string }
  | { kind: 'complete'; messageId: string; text: string; total: number; meta: M }
  /** The part's total disagrees with the assembly's. */
  | { kind: 'inconsistent'; messageId: string }
  /** Too many assemblies pending: the part is refused. */
  | { kind: 'full' };

export interface ExpiredAssembly<M> {
  key: string;
  messageId: string;
  received: number;
  total: number;
  meta: M;
}

export interface ConcatAssemblerOptions<M> {
  allocateMessageId: () => string;
  onExpire: (assembly: ExpiredAssembly<M>) => void;
  timeoutMs?: number;
  maxPending?: number;
}

interface Part {
  payload: Buffer;
  dataCoding: number;
}

interface Assembly<M> {
  messageId: string;
  total: number;
  parts: Map<number, Part>;
  meta: M;
  metaFromFirstPart: boolean;
  timer: NodeJS.Timeout;
}

export class ConcatAssembler<M> {
  private readonly pending = new Map<string, Assembly<M>>();
  private readonly timeoutMs: number;
  private readonly maxPending: number;

  constructor(private readonly options: ConcatAssemblerOptions<M>) {
    this.timeoutMs = options.timeoutMs ?? 60_000;
    this.maxPending = options.maxPending ?? 10_000;
  }

  get size(): number {
    return this.pending.size;
  }

  /**
   * Adds one part: `payload` is its user data without the UDH, `meta` what the caller needs when the message is
   * complete (taken from part 1, or from the first part received until part 1 arrives).
   */
  add(key: string, ref: ConcatRef, payload: Buffer, dataCoding: number, meta: M): ConcatAddResult<M> {
    let a = this.pending.get(key);
    if (!a) {
      if (this.pending.size >= this.maxPending) return { kind: 'full' };
      a = {
        messageId: this.options.allocateMessageId(),
        total: ref.total,
        parts: new Map(),
        meta,
        metaFromFirstPart: ref.seq === 1,
        timer: setTimeout(() => this.expire(key), this.timeoutMs).unref(),
      };
      this.pending.set(key, a);
    }
    if (ref.total !== a.total || ref.seq < 1 || ref.seq > a.total) {
      return { kind: 'inconsistent', messageId: a.messageId };
    }
    if (a.parts.has(ref.seq)) return { kind: 'duplicate', messageId: a.messageId };
    a.parts.set(ref.seq, { payload, dataCoding });
    if (ref.seq === 1 && !a.metaFromFirstPart) {
      a.meta = meta;
      a.metaFromFirstPart = true;
    }
    if (a.parts.size < a.total) {
      return { kind: 'partial', messageId: a.messageId, received: a.parts.size, total: a.total };
    }
    clearTimeout(a.timer);
    this.pending.delete(key);
    return { kind: 'complete', messageId: a.messageId, text: assembleText(a), total: a.total, meta: a.meta };
  }

  /** Drops every pending assembly without calling onExpire (shutdown). */
  clear(): void {
    for (const a of this.pending.values()) clearTimeout(a.timer);
    this.pending.clear();
  }

  private expire(key: string): void {
    const a = this.pending.get(key);
    if (!a) return;
    this.pending.delete(key);
    this.options.onExpire({ key, messageId: a.messageId, received: a.parts.size, total: a.total, meta: a.meta });
  }
}

/**
 * Joins the parts' octets before decoding when they share a data_coding, so a UCS-2 surrogate pair that a client
 * split across two parts still decodes; parts in different codings are decoded one by one.
 */
function assembleText<M>(a: Assembly<M>): string {
  const parts = [...a.parts.entries()].sort(([x], [y]) => x - y).map(([, p]) => p);
  const dataCoding = parts[0]!.dataCoding;
  if (parts.every((p) => p.dataCoding === dataCoding)) {
    return decodeSmppText(Buffer.concat(parts.map((p) => p.payload)), dataCoding);
  }
  return parts.map((p) => decodeSmppText(p.payload, p.dataCoding)).join('');
}
