import { uuidv7 } from '../../domain/ids.ts';
import { orderRoutes, ROUTE_STRATEGIES, type RouteMatch, type RouteStrategy, toStrategy, type WeightedConnector } from '../../domain/routing.ts';
import { CoreError, fail } from '../errors.ts';
import { parseEuros, toEuros } from '../../domain/money.ts';
import type { ConnectorKinds } from '../ports.ts';
import type { SecretBox } from '../secrets.ts';
import { inTransaction, type Store } from '../../store/db.ts';
import { checkRate, parseRateCsv, type Rate, RateError, type RateInput } from '../../domain/rates.ts';
import {
  type ConnectorRateRow,
  deleteRateRows,
  deleteRatesOfConnector,
  insertRateRows,
  listRateRows,
  type MarginTotal,
  marginTotals,
} from '../../store/rates.ts';
import { type ConnectorService, toRate } from './service.ts';
import { listAttempts, type MessageAttemptRow } from '../../store/attempts.ts';
import { findMessages } from '../../store/messages.ts';
import {
  type ConnectorRow,
  deleteConnectorRow,
  deleteRouteRow,
  findConnectorRow,
  findRouteRow,
  insertConnectorRow,
  insertRouteRow,
  listConnectorRows,
  listRouteRows,
  listRowsOfSource,
  routeTotals,
  type RouteRow,
  updateConnectorRow,
  updateRouteRow,
} from '../../store/connectors.ts';
import type { DefinitionSource } from './service.ts';

/** A connector as the admin API shows it: settings without secrets, and which secrets are set. */
export interface ConnectorView {
  id: string;
  name: string;
  kind: string;
  settings: Record<string, unknown>;
  secretsSet: string[];
  source: DefinitionSource;
  enabled: boolean;
  createdAt: number;
  updatedAt: number;
}

export interface RouteView {
  id: string;
  name: string;
  priority: number;
  match: RouteMatch;
  connectors: WeightedConnector[];
  failover: string[];
  /** Euros per part, or null. */
  costPerPart: number | null;
  lookupBeforeSend: boolean;
  strategy: RouteStrategy;
  allowLoss: boolean;
  maxAttempts: number;
  /** 0 to 1, or null. */
  minDeliveryRate: number | null;
  source: DefinitionSource;
  enabled: boolean;
  createdAt: number;
  updatedAt: number;
}

/** A connector definition as given: `name`, `type`, its kind's fields (secrets among them), `enabled`. */
export type ConnectorInput = Record<string, unknown>;

/** A route as given; connectors may be named by `connectorId` or by `connector` (its name). */
export interface RouteInput {
  name?: unknown;
  priority?: unknown;
  match?: unknown;
  connectors?: unknown;
  failover?: unknown;
  costPerPart?: unknown;
  lookupBeforeSend?: unknown;
  strategy?: unknown;
  allowLoss?: unknown;
  maxAttempts?: unknown;
  minDeliveryRate?: unknown;
  enabled?: unknown;
}

/** Rates loaded at once at most (JSON or CSV). */
const MAX_RATES = 10_000;

/** Runs a check of rates; its error becomes the core's, naming where. */
function rateOrFail<T>(check: () => T): T {
  try {
    return check();
  } catch (e) {
    if (e instanceof RateError) invalid(e.field, e.reason);
    throw e;
  }
}

const NAME_RE = /^[a-z0-9][a-z0-9_-]{0,63}$/;
const TYPES = ['SMS', 'RCS', 'VOICE', 'LOOKUP'];
const FLOWS = ['TRANSACTIONAL', 'MARKETING', 'OTP'];
const RESERVED = ['name', 'type', 'enabled', 'connectorId', 'source'];

function invalid(field: string, reason: string): never {
  return fail('INVALID_REQUEST', reason, field);
}

/**
 * Creating, changing and removing operator connections and routes, from the admin API or the configuration file.
 * Secrets are sealed with `TERN_SECRET_KEY` and never given back. Every change reaches every node's registry and
 * router at once (a `config` signal, `NOTIFY` on PostgreSQL).
 */
export class ConnectorAdmin {
  constructor(
    private readonly store: Store,
    private readonly kinds: ConnectorKinds,
    private readonly box: SecretBox,
    private readonly running?: Pick<ConnectorService, 'applyHere'>,
  ) {}

  private async changed(): Promise<void> {
    await this.store.signals.raise(this.store.db, 'config');
    await this.running?.applyHere();
  }

  private view(r: ConnectorRow): ConnectorView {
    return {
      id: r.id,
      name: r.name,
      kind: r.kind,
      settings: JSON.parse(r.settings) as Record<string, unknown>,
      secretsSet: Object.keys(r.secrets ? (JSON.parse(r.secrets) as Record<string, string>) : {}),
      source: r.source as DefinitionSource,
      enabled: r.enabled === 1,
      createdAt: Number(r.created_at),
      updatedAt: Number(r.updated_at),
    };
  }

  private routeView(r: RouteRow): RouteView {
    return {
      id: r.id,
      name: r.name,
      priority: r.priority,
      match: JSON.parse(r.match) as RouteMatch,
      connectors: JSON.parse(r.connectors) as WeightedConnector[],
      failover: JSON.parse(r.failover) as string[],
      costPerPart: r.cost_per_part === null ? null : toEuros(Number(r.cost_per_part)),
      lookupBeforeSend: Number(r.lookup_before_send) === 1,
      strategy: toStrategy(r.strategy),
      allowLoss: Number(r.allow_loss) === 1,
      maxAttempts: Number(r.max_attempts),
      minDeliveryRate: r.min_delivery_rate === null ? null : Number(r.min_delivery_rate) / 10_000,
      source: r.source as DefinitionSource,
      enabled: r.enabled === 1,
      createdAt: Number(r.created_at),
      updatedAt: Number(r.updated_at),
    };
  }

  async connectors(): Promise<ConnectorView[]> {
    return (await listConnectorRows(this.store.db)).map((r) => this.view(r));
  }

  async connector(id: string): Promise<ConnectorView> {
    const row = await findConnectorRow(this.store.db, { id });
    if (!row) fail('NOT_FOUND', `connector ${id} not found`);
    return this.view(row);
  }

  /** Splits a definition into the kind's settings and secrets, checked by the kind. */
  private check(kind: string, input: ConnectorInput, previous?: { settings: Record<string, unknown>; secrets: Record<string, string> }) {
    const k = this.kinds[kind];
    if (!k) invalid('type', `must be one of ${Object.keys(this.kinds).join(', ')}`);
    const settings: Record<string, unknown> = { ...previous?.settings };
    const secrets: Record<string, string> = { ...previous?.secrets };
    for (const [field, value] of Object.entries(input)) {
      if (RESERVED.includes(field)) continue;
      if (k.secretFields.includes(field)) {
        if (typeof value !== 'string' || value === '') invalid(field, 'must be a non-empty string');
        secrets[field] = value;
      } else if (value === null) {
        delete settings[field];
      } else {
        settings[field] = value;
      }
    }
    return k.validate(settings, secrets);
  }

  private seal(secrets: Record<string, string>): string | null {
    const names = Object.keys(secrets);
    if (names.length === 0) return null;
    return JSON.stringify(Object.fromEntries(names.map((n) => [n, this.box.seal(secrets[n]!, n)])));
  }

  private open(row: ConnectorRow): Record<string, string> {
    const sealed = row.secrets ? (JSON.parse(row.secrets) as Record<string, string>) : {};
    return Object.fromEntries(Object.entries(sealed).map(([k, v]) => [k, this.box.open(v)]));
  }

  async createConnector(input: ConnectorInput, source: DefinitionSource = 'API', now = Date.now()): Promise<ConnectorView> {
    const name = input.name;
    if (typeof name !== 'string' || !NAME_RE.test(name)) invalid('name', 'lowercase letters, digits, - and _, at most 64');
    const kind = input.type;
    if (typeof kind !== 'string') invalid('type', 'is required');
    if (input.enabled !== undefined && typeof input.enabled !== 'boolean') invalid('enabled', 'must be true or false');
    if (await findConnectorRow(this.store.db, { name })) fail('CONFLICT', `a connector named ${name} exists`);
    const { settings, secrets } = this.check(kind, input);
    const row: ConnectorRow = {
      id: uuidv7(now),
      name,
      kind,
      settings: JSON.stringify(settings),
      secrets: this.seal(secrets),
      source,
      enabled: input.enabled === false ? 0 : 1,
      created_at: now,
      updated_at: now,
    };
    await insertConnectorRow(this.store.db, row);
    await this.changed();
    return this.view(row);
  }

  /** Changes fields of a connector (`null` removes a setting); its name and type stay. */
  async updateConnector(id: string, input: ConnectorInput, source?: DefinitionSource, now = Date.now()): Promise<ConnectorView> {
    const row = await findConnectorRow(this.store.db, { id });
    if (!row) fail('NOT_FOUND', `connector ${id} not found`);
    if (input.name !== undefined && input.name !== row.name) invalid('name', 'cannot change: messages and receipts name their connector by it');
    if (input.type !== undefined && input.type !== row.kind) invalid('type', 'cannot change; create another connector');
    if (input.enabled !== undefined && typeof input.enabled !== 'boolean') invalid('enabled', 'must be true or false');
    const { settings, secrets } = this.check(row.kind, input, { settings: JSON.parse(row.settings) as Record<string, unknown>, secrets: this.open(row) });
    const patch = {
      settings: JSON.stringify(settings),
      secrets: this.seal(secrets),
      ...(input.enabled !== undefined ? { enabled: input.enabled ? 1 : 0 } : {}),
      ...(source ? { source } : {}),
      updated_at: now,
    };
    await updateConnectorRow(this.store.db, id, patch);
    await this.changed();
    return this.view({ ...row, ...patch });
  }

  async deleteConnector(id: string): Promise<ConnectorView> {
    const row = await findConnectorRow(this.store.db, { id });
    if (!row) fail('NOT_FOUND', `connector ${id} not found`);
    const users = (await listRouteRows(this.store.db)).filter((r) => {
      const v = this.routeView(r);
      return v.connectors.some((c) => c.connectorId === id) || v.failover.includes(id);
    });
    if (users.length > 0) fail('CONFLICT', `routes ${users.map((r) => r.name).join(', ')} use connector ${row.name}; change them first`);
    await inTransaction(this.store, async (trx) => {
      await deleteConnectorRow(trx, id);
      await deleteRatesOfConnector(trx, id);
    });
    await this.changed();
    return this.view(row);
  }

  async routes(): Promise<RouteView[]> {
    return orderRoutes((await listRouteRows(this.store.db)).map((r) => this.routeView(r)));
  }

  async route(id: string): Promise<RouteView> {
    const row = await findRouteRow(this.store.db, { id });
    if (!row) fail('NOT_FOUND', `route ${id} not found`);
    return this.routeView(row);
  }

  /** Resolves a connector reference (`connectorId` or `connector` name) to an id. */
  private async connectorRef(value: unknown, field: string): Promise<string> {
    const ref: { connectorId?: unknown; connector?: unknown } | null =
      typeof value === 'string' ? { connectorId: value } : (value as { connectorId?: unknown; connector?: unknown } | null);
    const id = typeof ref?.connectorId === 'string' ? ref.connectorId : undefined;
    const name = typeof ref?.connector === 'string' ? ref.connector : undefined;
    if (id === undefined && name === undefined) invalid(field, 'name a connector by connectorId or connector (its name)');
    const row = (id !== undefined ? await findConnectorRow(this.store.db, { id }) : null) ?? (await findConnectorRow(this.store.db, { name: name ?? id }));
    if (!row) invalid(field, `no connector ${name ?? id}`);
    return row.id;
  }

  private async checkRoute(input: RouteInput, previous?: RouteView): Promise<Omit<RouteRow, 'id' | 'source' | 'created_at' | 'updated_at'>> {
    const name = input.name ?? previous?.name;
    if (typeof name !== 'string' || name.trim() === '' || name.length > 64) invalid('name', '1 to 64 characters');
    const priority = input.priority ?? previous?.priority ?? 100;
    if (!Number.isInteger(priority) || (priority as number) < 0 || (priority as number) > 1_000_000) invalid('priority', 'a whole number from 0 to 1000000');
    const match = (input.match ?? previous?.match ?? {}) as Record<string, unknown>;
    if (typeof match !== 'object' || match === null || Array.isArray(match)) invalid('match', 'must be an object');
    const allowed = ['prefix', 'country', 'mccMnc', 'type', 'flow', 'organisationId', 'channelId'];
    for (const [k, v] of Object.entries(match)) {
      if (!allowed.includes(k)) invalid(`match.${k}`, `is not a match field (${allowed.join(', ')})`);
      if (typeof v !== 'string' || v === '') invalid(`match.${k}`, 'must be a non-empty string');
    }
    if (match.prefix !== undefined && !/^\d{1,15}$/.test(match.prefix as string)) invalid('match.prefix', 'digits of an international number');
    if (match.country !== undefined && !/^[A-Z]{2}$/.test(match.country as string)) invalid('match.country', 'an ISO 3166 alpha-2 code, e.g. GB');
    if (match.mccMnc !== undefined && !/^\d{5,6}$/.test(match.mccMnc as string)) invalid('match.mccMnc', 'MCC and MNC, 5 or 6 digits');
    if (match.type !== undefined && !TYPES.includes(match.type as string)) invalid('match.type', `one of ${TYPES.join(', ')}`);
    if (match.flow !== undefined && !FLOWS.includes(match.flow as string)) invalid('match.flow', `one of ${FLOWS.join(', ')}`);
    const rawConnectors = input.connectors ?? previous?.connectors;
    if (!Array.isArray(rawConnectors) || rawConnectors.length === 0 || rawConnectors.length > 32) invalid('connectors', '1 to 32 connectors');
    const connectors: WeightedConnector[] = [];
    for (const [i, c] of rawConnectors.entries()) {
      const weight = (c as { weight?: unknown })?.weight ?? 1;
      if (!Number.isInteger(weight) || (weight as number) < 0 || (weight as number) > 1_000_000) invalid(`connectors[${i}].weight`, 'a whole number from 0');
      connectors.push({ connectorId: await this.connectorRef(c, `connectors[${i}]`), weight: weight as number });
    }
    const rawFailover = input.failover ?? previous?.failover ?? [];
    if (!Array.isArray(rawFailover) || rawFailover.length > 32) invalid('failover', 'a list of at most 32 connectors');
    const failover: string[] = [];
    for (const [i, f] of rawFailover.entries()) failover.push(await this.connectorRef(f, `failover[${i}]`));
    const cost = input.costPerPart !== undefined ? input.costPerPart : (previous?.costPerPart ?? null);
    let costMicros: number | null = null;
    if (cost !== null) {
      const parsed = parseEuros(cost, { allowZero: true });
      if (!parsed.ok) invalid('costPerPart', `euros per part: ${parsed.reason}`);
      if (parsed.micros > 100_000_000) invalid('costPerPart', 'at most 100 euros per part');
      costMicros = parsed.micros;
    }
    const enabled = input.enabled ?? previous?.enabled ?? true;
    if (typeof enabled !== 'boolean') invalid('enabled', 'must be true or false');
    const lookupBeforeSend = input.lookupBeforeSend ?? previous?.lookupBeforeSend ?? false;
    if (typeof lookupBeforeSend !== 'boolean') invalid('lookupBeforeSend', 'must be true or false');
    if (lookupBeforeSend && match.type === 'LOOKUP') invalid('lookupBeforeSend', 'is for routes that carry messages, not LOOKUP routes');
    const strategy = input.strategy ?? previous?.strategy ?? 'weight';
    if (typeof strategy !== 'string' || !(ROUTE_STRATEGIES as readonly string[]).includes(strategy))
      invalid('strategy', `one of ${ROUTE_STRATEGIES.join(', ')}`);
    const allowLoss = input.allowLoss ?? previous?.allowLoss ?? false;
    if (typeof allowLoss !== 'boolean') invalid('allowLoss', 'must be true or false');
    const maxAttempts = input.maxAttempts ?? previous?.maxAttempts ?? 1;
    if (!Number.isInteger(maxAttempts) || (maxAttempts as number) < 1 || (maxAttempts as number) > 10) invalid('maxAttempts', 'a whole number from 1 to 10');
    const minRate = input.minDeliveryRate !== undefined ? input.minDeliveryRate : (previous?.minDeliveryRate ?? null);
    if (minRate !== null && (typeof minRate !== 'number' || !Number.isFinite(minRate) || minRate < 0 || minRate > 1))
      invalid('minDeliveryRate', 'a delivery rate from 0 to 1 (0.9: 90 %), or null');
    return {
      min_delivery_rate: minRate === null ? null : Math.round(minRate * 10_000),
      strategy,
      allow_loss: allowLoss ? 1 : 0,
      max_attempts: maxAttempts as number,
      name: name.trim(),
      priority: priority as number,
      match: JSON.stringify(match),
      connectors: JSON.stringify(connectors),
      failover: JSON.stringify(failover),
      cost_per_part: costMicros,
      lookup_before_send: lookupBeforeSend ? 1 : 0,
      enabled: enabled ? 1 : 0,
    };
  }

  async createRoute(input: RouteInput, source: DefinitionSource = 'API', now = Date.now()): Promise<RouteView> {
    const row: RouteRow = { id: uuidv7(now), ...(await this.checkRoute(input)), source, created_at: now, updated_at: now };
    await insertRouteRow(this.store.db, row);
    await this.changed();
    return this.routeView(row);
  }

  async updateRoute(id: string, input: RouteInput, source?: DefinitionSource, now = Date.now()): Promise<RouteView> {
    const previous = await this.route(id);
    const patch = { ...(await this.checkRoute(input, previous)), ...(source ? { source } : {}), updated_at: now };
    await updateRouteRow(this.store.db, id, patch);
    await this.changed();
    return this.route(id);
  }

  async deleteRoute(id: string): Promise<RouteView> {
    const route = await this.route(id);
    await deleteRouteRow(this.store.db, id);
    await this.changed();
    return route;
  }

  /**
   * Brings the connectors and routes of the configuration file in: created or overwritten by name (the file wins),
   * and those the file named before but no longer does are removed. Errors name the entry.
   */
  async applyConfiguration(connectors: readonly Record<string, unknown>[] | null, routes: readonly Record<string, unknown>[] | null): Promise<void> {
    const label = (what: string, i: number, e: unknown) =>
      e instanceof CoreError ? new CoreError(e.kind, e.reason, `${what}[${i}]${e.field ? `.${e.field}` : ''}`) : e;
    for (const [i, entry] of (connectors ?? []).entries()) {
      try {
        const { rates, ...c } = entry;
        const existing = typeof c.name === 'string' ? await findConnectorRow(this.store.db, { name: c.name }) : null;
        const id = existing ? (await this.updateConnector(existing.id, c, 'CONFIG')).id : (await this.createConnector(c, 'CONFIG')).id;
        if (rates !== undefined) await this.fileRates(id, rates);
      } catch (e) {
        throw label('connectors', i, e);
      }
    }
    for (const [i, r] of (routes ?? []).entries()) {
      try {
        const existing = typeof r.name === 'string' ? await findRouteRow(this.store.db, { name: r.name }) : null;
        if (existing) await this.updateRoute(existing.id, r, 'CONFIG');
        else await this.createRoute(r, 'CONFIG');
      } catch (e) {
        throw label('routes', i, e);
      }
    }
    // A section the file does not have leaves that kind of definition alone.
    if (routes) {
      const names = new Set(routes.map((r) => r.name));
      for (const r of await listRowsOfSource(this.store.db, 'routes', 'CONFIG')) if (!names.has(r.name)) await this.deleteRoute(r.id);
    }
    if (connectors) {
      const names = new Set(connectors.map((c) => c.name));
      for (const c of await listRowsOfSource(this.store.db, 'connectors', 'CONFIG')) if (!names.has(c.name)) await this.deleteConnector(c.id);
    }
  }

  /** A connector's rates, every version, oldest in force first; `at`: only those in force then. */
  async rates(connectorId: string, at?: number): Promise<Rate[]> {
    const row = await findConnectorRow(this.store.db, { id: connectorId });
    if (!row) fail('NOT_FOUND', `connector ${connectorId} not found`);
    const all = (await listRateRows(this.store.db, connectorId)).map(toRate);
    return at === undefined ? all : all.filter((r) => r.validFrom <= at && (r.validTo === null || r.validTo > at));
  }

  /**
   * Adds rates to a connector's table (JSON entries: price, currency, type, prefix, country, mcc+mnc or mccMnc,
   * validFrom, validTo), all or none. Rates are never changed once loaded: a new price list is new rates from its
   * date, and the cost of a message stays the one in force when it was placed.
   */
  async addRates(connectorId: string, entries: unknown, now = Date.now()): Promise<Rate[]> {
    if (!Array.isArray(entries) || entries.length === 0) invalid('rates', 'a list of 1 to 10000 rates');
    if (entries.length > MAX_RATES) invalid('rates', `at most ${MAX_RATES} rates at once`);
    const checked = entries.map((e, i) => {
      if (typeof e !== 'object' || e === null || Array.isArray(e)) invalid(`rates[${i}]`, 'must be an object');
      return rateOrFail(() => checkRate(e as Record<string, unknown>, `rates[${i}]`, now));
    });
    return this.storeRates(connectorId, checked, now);
  }

  /** Adds the rates of an operator's price list in CSV (a header row, then one rate a line), all or none. */
  async importRates(connectorId: string, csv: string, now = Date.now()): Promise<Rate[]> {
    if (csv.trim() === '') invalid('csv', 'the file is empty: a header row, then one rate a line');
    return this.storeRates(
      connectorId,
      rateOrFail(() => parseRateCsv(csv, now, MAX_RATES)),
      now,
    );
  }

  /**
   * A connector's `rates` in the configuration file: those not loaded yet are added (the file is applied at every
   * start; a rate is never loaded twice). A rate without `validFrom` there has been in force from the start.
   */
  private async fileRates(connectorId: string, entries: unknown): Promise<void> {
    if (!Array.isArray(entries)) invalid('rates', 'a list of rates');
    const checked = entries.map((e, i) => {
      if (typeof e !== 'object' || e === null || Array.isArray(e)) invalid(`rates[${i}]`, 'must be an object');
      return rateOrFail(() => checkRate(e as Record<string, unknown>, `rates[${i}]`, 0));
    });
    const key = (r: RateInput) => JSON.stringify([r.type, r.prefix, r.country, r.mccMnc, r.amount, r.validFrom, r.validTo]);
    const loaded = new Set((await listRateRows(this.store.db, connectorId)).map((r) => key(toRate(r))));
    const fresh = checked.filter((r, i) => !loaded.has(key(r)) && checked.findIndex((o) => key(o) === key(r)) === i);
    if (fresh.length > 0) await this.storeRates(connectorId, fresh, Date.now());
  }

  private async storeRates(connectorId: string, rates: RateInput[], now: number): Promise<Rate[]> {
    const row = await findConnectorRow(this.store.db, { id: connectorId });
    if (!row) fail('NOT_FOUND', `connector ${connectorId} not found`);
    const rows: ConnectorRateRow[] = rates.map((r, i) => ({
      id: uuidv7(now + i),
      connector_id: connectorId,
      type: r.type,
      prefix: r.prefix,
      country: r.country,
      mcc_mnc: r.mccMnc,
      amount: r.amount,
      valid_from: r.validFrom,
      valid_to: r.validTo,
      created_at: now,
    }));
    await inTransaction(this.store, async (trx) => {
      await insertRateRows(trx, rows);
      await this.store.signals.raise(trx, 'config');
    });
    await this.running?.applyHere();
    return rows.map(toRate);
  }

  /**
   * Removes a rate not in force yet (a price list loaded by mistake). One in force or past stays: costs recorded
   * came from it; a new rate from a date replaces it.
   */
  async deleteRate(connectorId: string, rateId: string, now = Date.now()): Promise<Rate> {
    const rate = (await this.rates(connectorId)).find((r) => r.id === rateId);
    if (!rate) fail('NOT_FOUND', `rate ${rateId} not found on connector ${connectorId}`);
    if (rate.validFrom <= now) fail('CONFLICT', 'this rate is in force or was: load a new rate from a date to replace it');
    await inTransaction(this.store, async (trx) => {
      await deleteRateRows(trx, connectorId, [rateId]);
      await this.store.signals.raise(trx, 'config');
    });
    await this.running?.applyHere();
    return rate;
  }

  /** A message's placements, first first: connector, route, cost, and how each ended. */
  async attempts(messageId: string): Promise<MessageAttemptRow[]> {
    const [m] = await findMessages(this.store.db, [messageId]);
    if (!m) fail('NOT_FOUND', `message ${messageId} not found`);
    return listAttempts(this.store.db, messageId);
  }

  /** Placements per organisation, connector, country (and day or month) over days: charged, cost (micro-euros). */
  margins(
    fromDay: string,
    toDay: string,
    filter: { organisationId?: string; connector?: string; country?: string },
    per: 'day' | 'month' | 'none',
  ): Promise<MarginTotal[]> {
    return marginTotals(this.store.db, fromDay, toDay, filter, per);
  }

  /** Placements per route and connector over days (YYYY-MM-DD, inclusive): parts, cost, charged, margin (micro-euros). */
  async consumption(fromDay: string, toDay: string, filter: { route?: string; connector?: string } = {}) {
    return (await routeTotals(this.store.db, fromDay, toDay, filter)).map((t) => ({ ...t, margin: t.charged - t.cost }));
  }
}
