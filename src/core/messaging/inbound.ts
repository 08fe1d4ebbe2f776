import { Cache } from '../cache.ts';
import type { InboundEvent } from '../ports.ts';
import { uuidv7 } from '../../domain/ids.ts';
import { DEFAULT_OPT_OUT_SHORT_CODE, isOptOutReply, optCommand } from '../../domain/opt-out.ts';
import { checkNumber, normaliseMsisdn } from '../../domain/phone.ts';
import { addToBlacklist, removeFromBlacklist } from '../../store/blacklist.ts';
import { type Channel, listChannelOrganisationIds } from '../../store/channels.ts';
import { inTransaction, type Store } from '../../store/db.ts';
import {
  findLastMt,
  insertEvents,
  insertMessages,
  type MessageEventRow,
  type MessageRow,
  organisationsWithMarketingTo,
  storedInboundUpstreamIds,
} from '../../store/messages.ts';
import { listOrganisationIdsByOptOutCode } from '../../store/organisations.ts';
import { insertUnrouted, listUnrouted, type UnroutedInboundRow } from '../../store/unrouted-inbound.ts';
import type { TenancyService } from '../tenancy/service.ts';
import { utcDay } from '../../domain/dates.ts';
import type { MessagingService } from './service.ts';

const ROUTING_CACHE_TTL_MS = 5_000;
const MISS_REFRESH_MS = 1_000;

/** Active channels by `type|address`, as read at `at`. Dropped on every node when a channel changes (`settings`). */
interface OptOp {
  organisationId: string;
  msisdn: string;
  op: 'STOP' | 'START';
  at: number;
}

interface RoutingTable {
  at: number;
  byAddress: Map<string, Channel>;
}

export interface InboundResult {
  stored: MessageRow[];
  unrouted: number;
}

/** Digits for numbers, the name itself for alphanumeric senders and short codes. */
function addressKey(value: string): string {
  const n = normaliseMsisdn(value);
  return n.ok ? n.msisdn : value.trim().toUpperCase();
}

/**
 * Inbound messages (MO) from any connector: routed to the channel that owns the destination number, short code or
 * agent, linked to the last MT that channel sent to that user, stored with their event (so the webhook goes out in
 * the same transaction), and STOP/START applied to the organisation's blacklist.
 */
export class InboundService {
  /** The routing table, read whole: one entry, served for ROUTING_CACHE_TTL_MS. */
  private readonly routing = new Cache<'table', RoutingTable>({ capacity: 1, ttlMs: ROUTING_CACHE_TTL_MS });

  constructor(
    private readonly store: Store,
    private readonly tenancy: TenancyService,
    private readonly messaging: MessagingService,
  ) {
    tenancy.onChannelChange(() => this.routing.clear());
    store.signals.on('settings', () => this.routing.clear());
  }

  private async channelFor(type: string, to: string, now: number): Promise<Channel | null> {
    const key = `${type}|${addressKey(to)}`;
    let table = this.routing.get('table', now);
    // A miss may be a channel created on another node since the table was read: read it again, at most once a second.
    const stale = table !== undefined && !table.byAddress.has(key) && now - table.at > MISS_REFRESH_MS;
    if (table === undefined || stale) {
      const generation = this.routing.generation;
      table = await this.readRouting(now);
      this.routing.setUnlessCleared(generation, 'table', table, now);
    }
    return table.byAddress.get(key) ?? null;
  }

  private async readRouting(now: number): Promise<RoutingTable> {
    const byAddress = new Map<string, Channel>();
    for (const c of await this.tenancy.listChannels(await listChannelOrganisationIds(this.store.db))) {
      if (c.state !== 'ACTIVE') continue;
      const addresses = [...c.fromFieldList, ...(c.defaultFromField ? [c.defaultFromField] : [])];
      for (const a of addresses) {
        const key = `${c.type}|${addressKey(a)}`;
        if (!byAddress.has(key)) byAddress.set(key, c);
      }
    }
    return { at: now, byAddress };
  }

  /**
   * A STOP sent to an opt-out short code that no channel owns: it opts the number out of every organisation using
   * that short code (its own, or the platform's) that sent it marketing.
   */
  private async optOutsByShortCode(to: string, msisdn: string, text: string | null, at: number): Promise<OptOp[]> {
    const code = to.trim();
    if (text === null || !/^\d{3,8}$/.test(code) || !isOptOutReply(text, code)) return [];
    const candidates = await listOrganisationIdsByOptOutCode(this.store.db, code, code === DEFAULT_OPT_OUT_SHORT_CODE);
    if (candidates.length === 0) return [];
    const senders = await organisationsWithMarketingTo(this.store.db, candidates, msisdn);
    return senders.map((organisationId) => ({ organisationId, msisdn, op: 'STOP' as const, at }));
  }

  /** STOP or START sent to a channel: the word alone, or STOP with the organisation's opt-out short code. */
  private async optCommandFor(channel: Channel, text: string | null, now: number): Promise<'STOP' | 'START' | null> {
    if (text === null) return null;
    const command = optCommand(text);
    if (command) return command;
    const { shortCode } = await this.tenancy.optOut(channel.organisationId, now);
    return isOptOutReply(text, shortCode) ? 'STOP' : null;
  }

  /** Inbound messages that matched no channel, newest first. */
  listUnrouted(page: number, pageSize: number): Promise<UnroutedInboundRow[]> {
    return listUnrouted(this.store.db, { offset: (page - 1) * pageSize, limit: pageSize });
  }

  /**
   * Leaves out messages an operator handed over again under an id already stored (or twice in this batch). A race
   * between two nodes storing the same one is settled by the unique index: the loser's transaction fails and its
   * connector asks the operator to hand it over again, when it is found stored.
   */
  private async withoutRepeats(events: InboundEvent[]): Promise<InboundEvent[]> {
    const withId = events.filter((e) => e.upstreamId !== undefined);
    if (withId.length === 0) return events;
    const seen = new Set<string>();
    for (const connector of new Set(withId.map((e) => e.connector))) {
      const ids = withId.filter((e) => e.connector === connector).map((e) => e.upstreamId!);
      for (const id of await storedInboundUpstreamIds(this.store.db, connector, ids)) seen.add(`${connector}|${id}`);
    }
    return events.filter((e) => {
      if (e.upstreamId === undefined) return true;
      const key = `${e.connector}|${e.upstreamId}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
  }

  async receive(all: InboundEvent[]): Promise<InboundResult> {
    const events = await this.withoutRepeats(all);
    const now = Date.now();
    const rows: MessageRow[] = [];
    const stored: MessageEventRow[] = [];
    const unrouted: UnroutedInboundRow[] = [];
    const optOps: OptOp[] = [];
    for (const e of events) {
      const channel = await this.channelFor(e.type, e.to, now);
      const from = normaliseMsisdn(e.from);
      if (!channel || !from.ok) {
        if (from.ok) optOps.push(...(await this.optOutsByShortCode(e.to, from.msisdn, typeof e.body.text === 'string' ? e.body.text : null, e.at)));
        unrouted.push({
          id: uuidv7(e.at),
          connector: e.connector,
          type: e.type,
          sender: e.from,
          recipient: e.to,
          body: JSON.stringify(e.body),
          received_at: e.at,
        });
        continue;
      }
      const origin = await findLastMt(this.store.db, channel.organisationId, channel.id, from.msisdn);
      const text = typeof e.body.text === 'string' ? e.body.text : null;
      const id = uuidv7(e.at);
      rows.push({
        id,
        organisation_id: channel.organisationId,
        payer_id: channel.organisationId,
        channel_id: channel.id,
        campaign_id: null,
        type: e.type,
        direction: 'MO',
        recipient: e.to,
        sender: from.msisdn,
        body: JSON.stringify(e.body),
        encoding: null,
        part_count: 1,
        length: text?.length ?? 0,
        price: 0,
        price_kind: null,
        charged: 0,
        status: 'RECEIVED',
        status_detail: null,
        status_at: e.at,
        ref_client: origin?.ref_client ?? null,
        callback_url_status: null,
        callback_url_mo: origin?.callback_url_mo ?? null,
        accepted_at: e.at,
        send_at: e.at,
        validity_until: null,
        origin_message_id: origin?.id ?? null,
        country: checkNumber(from.msisdn).isoCountryCode,
        mcc_mnc: null,
        network: null,
        upstream_id: e.upstreamId ?? null,
        connector: e.connector,
        source: 'CARRIER',
        smpp_credential_id: null,
        registered_delivery: 0,
        day: utcDay(e.at),
        extra: null,
        attempts: 0,
        route: null,
        cost: null,
        content_erased_at: null,
      });
      stored.push({
        id: uuidv7(e.at),
        message_id: id,
        organisation_id: channel.organisationId,
        channel_id: channel.id,
        kind: 'MO',
        status: 'RECEIVED',
        detail: null,
        at: e.at,
      });
      const command = await this.optCommandFor(channel, text, now);
      if (command) optOps.push({ organisationId: channel.organisationId, msisdn: from.msisdn, op: command, at: e.at });
    }
    await inTransaction(this.store, async (trx) => {
      await insertMessages(trx, rows);
      await insertEvents(trx, stored);
      await insertUnrouted(trx, unrouted);
      for (const o of optOps) {
        if (o.op === 'STOP') {
          await addToBlacklist(trx, { organisation_id: o.organisationId, msisdn: o.msisdn, source: 'STOP', created_at: o.at });
        } else {
          await removeFromBlacklist(trx, o.organisationId, o.msisdn);
        }
      }
      await this.messaging.consumers.run(trx, stored, new Map(rows.map((r) => [r.id, r])));
    });
    return { stored: rows, unrouted: unrouted.length };
  }
}
