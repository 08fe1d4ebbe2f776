import { decodeSmppText } from '../../domain/text.ts';

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
  /** Too many assemblies or bytes pending in all: the part is refused. */
  | { kind: 'full' }
  /** Its owner (a credential) holds as many parts or bytes pending as it may: its part is refused, nobody else's. */
  | { kind: 'over-budget' };

export interface ExpiredAssembly<M> {
  key: string;
  messageId: string;
  received: number;
  total: number;
  meta: M;
}

/** How long parts wait for the rest of their message, and how much may wait. */
export const CONCAT_DEFAULTS = {
  timeoutMs: 60_000,
  maxPending: 10_000,
  maxBytes: 64 * 2 ** 20,
  maxPartsPerOwner: 1_000,
  maxBytesPerOwner: 2 * 2 ** 20,
} as const;

export interface ConcatAssemblerOptions<M> {
  allocateMessageId: () => string;
  onExpire: (assembly: ExpiredAssembly<M>) => void;
  timeoutMs?: number;
  /** Assemblies pending in all. */
  maxPending?: number;
  /** Octets of parts pending in all. */
  maxBytes?: number;
  /** Parts and octets one owner may have pending. */
  maxPartsPerOwner?: number;
  maxBytesPerOwner?: number;
}

interface Usage {
  parts: number;
  bytes: number;
}

interface Part {
  payload: Buffer;
  dataCoding: number;
}

interface Assembly<M> {
  owner: string;
  bytes: number;
  messageId: string;
  total: number;
  parts: Map<number, Part>;
  meta: M;
  metaFromFirstPart: boolean;
  timer: NodeJS.Timeout;
}

/**
 * Parts wait in memory, within budgets: per owner (a credential: one that floods the table is refused alone, with
 * its parts and octets counted) and in all (assemblies and octets), so memory stays bounded whoever sends what.
 */
export class ConcatAssembler<M> {
  private readonly pending = new Map<string, Assembly<M>>();
  private readonly usage = new Map<string, Usage>();
  private bytes = 0;
  private readonly timeoutMs: number;
  private readonly maxPending: number;
  private readonly maxBytes: number;
  private readonly maxPartsPerOwner: number;
  private readonly maxBytesPerOwner: number;

  constructor(private readonly options: ConcatAssemblerOptions<M>) {
    this.timeoutMs = options.timeoutMs ?? CONCAT_DEFAULTS.timeoutMs;
    this.maxPending = options.maxPending ?? CONCAT_DEFAULTS.maxPending;
    this.maxBytes = options.maxBytes ?? CONCAT_DEFAULTS.maxBytes;
    this.maxPartsPerOwner = options.maxPartsPerOwner ?? CONCAT_DEFAULTS.maxPartsPerOwner;
    this.maxBytesPerOwner = options.maxBytesPerOwner ?? CONCAT_DEFAULTS.maxBytesPerOwner;
  }

  get size(): number {
    return this.pending.size;
  }

  /** Octets of parts pending in all. */
  get pendingBytes(): number {
    return this.bytes;
  }

  /** Parts and octets an owner has pending. */
  usageOf(owner: string): Usage {
    return { ...(this.usage.get(owner) ?? { parts: 0, bytes: 0 }) };
  }

  private release(a: Assembly<M>): void {
    const u = this.usage.get(a.owner);
    if (u) {
      u.parts -= a.parts.size;
      u.bytes -= a.bytes;
      if (u.parts <= 0) this.usage.delete(a.owner);
    }
    this.bytes -= a.bytes;
  }

  /**
   * Adds one part: `payload` is its user data without the UDH, `meta` what the caller needs when the message is
   * complete (taken from part 1, or from the first part received until part 1 arrives); `owner` is whose budget it
   * counts against.
   */
  add(key: string, ref: ConcatRef, payload: Buffer, dataCoding: number, meta: M, owner = ''): ConcatAddResult<M> {
    let a = this.pending.get(key);
    const u = this.usage.get(owner) ?? { parts: 0, bytes: 0 };
    if (u.parts + 1 > this.maxPartsPerOwner || u.bytes + payload.length > this.maxBytesPerOwner) return { kind: 'over-budget' };
    if (this.bytes + payload.length > this.maxBytes) return { kind: 'full' };
    if (!a) {
      if (this.pending.size >= this.maxPending) return { kind: 'full' };
      a = {
        owner,
        bytes: 0,
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
    a.bytes += payload.length;
    this.bytes += payload.length;
    u.parts++;
    u.bytes += payload.length;
    this.usage.set(owner, u);
    if (ref.seq === 1 && !a.metaFromFirstPart) {
      a.meta = meta;
      a.metaFromFirstPart = true;
    }
    if (a.parts.size < a.total) {
      return { kind: 'partial', messageId: a.messageId, received: a.parts.size, total: a.total };
    }
    clearTimeout(a.timer);
    this.pending.delete(key);
    this.release(a);
    return { kind: 'complete', messageId: a.messageId, text: assembleText(a), total: a.total, meta: a.meta };
  }

  /** Drops every pending assembly without calling onExpire (shutdown). */
  clear(): void {
    for (const a of this.pending.values()) clearTimeout(a.timer);
    this.pending.clear();
    this.usage.clear();
    this.bytes = 0;
  }

  private expire(key: string): void {
    const a = this.pending.get(key);
    if (!a) return;
    this.pending.delete(key);
    this.release(a);
    this.options.onExpire({ key, messageId: a.messageId, received: a.parts.size, total: a.total, meta: a.meta });
  }
}

function assembleText<M>(a: Assembly<M>): string {
  return joinPartsText([...a.parts.entries()].sort(([x], [y]) => x - y).map(([, p]) => p));
}

/**
 * The text of a message's parts, given in order. Joins the parts' octets before decoding when they share a
 * data_coding, so a UCS-2 surrogate pair that a client split across two parts still decodes; parts in different
 * codings are decoded one by one.
 */
export function joinPartsText(parts: ReadonlyArray<{ payload: Buffer; dataCoding: number }>): string {
  const dataCoding = parts[0]!.dataCoding;
  if (parts.every((p) => p.dataCoding === dataCoding)) {
    return decodeSmppText(Buffer.concat(parts.map((p) => p.payload)), dataCoding);
  }
  return parts.map((p) => decodeSmppText(p.payload, p.dataCoding)).join('');
}
