import { decodeSmppText } from '../../domain/text.ts';
import type { ConnectorContext, ConnectorRecord, InboundEvent } from '../../core/ports.ts';
import type { ConcatRef } from '../../protocols/smpp/concat.ts';

/** A mobile-originated short message as the SMSC handed it over: one part of a text, or the whole of it. */
export interface MoPart {
  source: string;
  destination: string;
  dataCoding: number;
  payload: Buffer;
  concat?: ConcatRef;
}

interface StoredPart {
  payload: string;
  dataCoding: number;
  at: number;
  /** Delivered as part of a whole (or given up): a later part with the same reference starts a new message. */
  done?: boolean;
}

/** Records of a long MO's parts are keyed by the assembly and the part's number. */
const assemblyOf = (p: { source: string; destination: string; concat: ConcatRef }) =>
  `mo:${encodeURIComponent(p.source)}|${encodeURIComponent(p.destination)}|${p.concat.ref}|${p.concat.total}`;

function partKeys(assembly: string, total: number): string[] {
  return Array.from({ length: total }, (_, i) => `${assembly}|${i + 1}`);
}

function parseAssembly(key: string): { assembly: string; source: string; destination: string; total: number } | null {
  const m = /^(mo:([^|]*)\|([^|]*)\|\d+\|(\d+))\|\d+$/.exec(key);
  return m ? { assembly: m[1]!, source: decodeURIComponent(m[2]!), destination: decodeURIComponent(m[3]!), total: Number(m[4]) } : null;
}

/** Joins parts' octets before decoding when they share a data_coding (a UCS-2 pair split across parts still decodes). */
function joinText(parts: StoredPart[]): string {
  const dc = parts[0]!.dataCoding;
  if (parts.every((p) => p.dataCoding === dc)) return decodeSmppText(Buffer.concat(parts.map((p) => Buffer.from(p.payload, 'base64'))), dc);
  return parts.map((p) => decodeSmppText(Buffer.from(p.payload, 'base64'), p.dataCoding)).join('');
}

export interface Assembled {
  event: InboundEvent;
  /** To write once the event is stored: the parts marked delivered. */
  done: ConnectorRecord[];
}

/**
 * Long inbound messages put back together, once. Each part is stored in the connector's records before the SMSC is
 * answered (so a part acknowledged is never lost, whichever node or bind received it); the part that completes the
 * set makes the message. It carries an id made of the assembly and its first part's arrival, so when two nodes
 * complete the same message at once the core stores it once. Parts still missing after `timeoutMs` are given up
 * on: what arrived is delivered as it is.
 */
export class MoAssembler {
  constructor(
    private readonly connector: string,
    private readonly timeoutMs: number,
  ) {}

  /** Stores a part; answers the whole message when this part completes it. */
  async add(ctx: ConnectorContext, part: MoPart & { concat: ConcatRef }, now: number): Promise<Assembled | null> {
    const assembly = assemblyOf(part);
    const stored: StoredPart = { payload: part.payload.toString('base64'), dataCoding: part.dataCoding, at: now };
    await ctx.records.put([{ key: `${assembly}|${part.concat.seq}`, data: stored as unknown as Record<string, unknown>, dueAt: now + this.timeoutMs }]);
    const keys = partKeys(assembly, part.concat.total);
    const got = await ctx.records.get(keys);
    const parts = keys.map((k) => got.get(k)?.data as StoredPart | undefined);
    if (parts.some((p) => p === undefined || p.done)) return null;
    return this.assembled(part.source, part.destination, assembly, keys, parts as StoredPart[]);
  }

  /** Parts whose wait ran out: what arrived of their message is delivered. */
  async expire(ctx: ConnectorContext, records: ConnectorRecord[]): Promise<Assembled[]> {
    const assemblies = new Map<string, { source: string; destination: string; total: number }>();
    for (const r of records) {
      const a = parseAssembly(r.key);
      if (a && !(r.data as unknown as StoredPart).done) assemblies.set(a.assembly, a);
    }
    const out: Assembled[] = [];
    for (const [assembly, a] of assemblies) {
      const keys = partKeys(assembly, a.total);
      const got = await ctx.records.get(keys);
      const present = keys.filter((k) => {
        const p = got.get(k)?.data as StoredPart | undefined;
        return p !== undefined && !p.done;
      });
      if (present.length === 0) continue;
      out.push(
        this.assembled(
          a.source,
          a.destination,
          assembly,
          present,
          present.map((k) => got.get(k)!.data as unknown as StoredPart),
        ),
      );
    }
    return out;
  }

  private assembled(source: string, destination: string, assembly: string, keys: string[], parts: StoredPart[]): Assembled {
    const first = Math.min(...parts.map((p) => p.at));
    return {
      event: {
        kind: 'mo',
        connector: this.connector,
        type: 'SMS',
        from: source,
        to: destination,
        body: { text: joinText(parts) },
        at: first,
        upstreamId: `${assembly}|${first}`,
      },
      done: keys.map((key, i) => ({ key, data: { ...parts[i], done: true } as unknown as Record<string, unknown>, dueAt: null })),
    };
  }
}
