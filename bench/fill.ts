/**
 * Databases holding many messages, for the cases that measure Tern on a store that has been in use: 8 organisations
 * with 2 SMS channels each (traffic skewed towards the first ones, as real customers are), BENCH_STORED_DAYS (60) days
 * of messages up to the fill's time, 2 million recipients on four networks, 90 % DELIVERED, 4 % UNDELIVERED,
 * 3 % UNDELIVERABLE (refunded) and 3 % replies (MO), with the consumption rollups rebuilt from the messages exactly as
 * Tern keeps them.
 *
 * How: Tern is started on an empty database and given the tenants and one real message of each kind (sent through
 * the API, delivered by the simulator); the fill then copies those sample rows in SQL (a recursive CTE on SQLite,
 * generate_series on PostgreSQL, a million rows per transaction, secondary indexes dropped during the load and built
 * again after), changing id, time, channel and number. It first checks that the rollups it will compute match those
 * Tern wrote for the samples. The ledger and event history of the copies are not written: no case reads them.
 *
 * Filled databases are kept between runs under `<system temp dir>/tern-bench-cache/`, keyed by message count, days,
 * the schema's migrations and this fill's version: a SQLite file there, or a PostgreSQL schema named in a JSON file
 * there. Filling for a newer schema deletes the older fill of the same size. Delete the folder (and
 * `drop schema bench_stored_… cascade`) to fill again.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type pg from 'pg';
import { migrations } from '../src/store/migrations/index.ts';
import { createSchema, type Dialect, dropSchema, postgresUrl, schemaExists, schemaName, withPostgres } from './databases.ts';
import { api, BENCH_ADMIN_KEY, progress, startBenchServer } from './support.ts';

/** Changes whenever what the fill writes changes, so older cached databases are not reused. */
const FILL_VERSION = 1;
const DAY_MS = 86_400_000;
const DAYS = Number(process.env.BENCH_STORED_DAYS ?? 60);
const CHUNK = 1_000_000;
const ORGANISATIONS = 8;
const CHANNELS_PER_ORGANISATION = 2;
/** The reply address of the first channel, which receives the sample MO. */
const SHORT_CODE = '36180';

export interface FilledDatabase {
  /** `sqlite:<file>` or the PostgreSQL URL with its schema. */
  databaseUrl: string;
  count: number;
  /** Accepted times of the first and last message. */
  firstAt: number;
  lastAt: number;
  /** The first (largest) organisation, and an ADMIN key of its first channel (it sees all its channels). */
  organisationId: string;
  key: string;
}

interface Sample {
  id: string;
  /** Out of 1000 messages. */
  share: number;
}

const cacheRoot = () => join(tmpdir(), 'tern-bench-cache');
const schemaVersion = () => {
  const names = Object.keys(migrations);
  return `m${names.length}-${names.at(-1)!.slice(0, 3)}`;
};
const cacheKey = (count: number) => `${count}-${DAYS}d-${schemaVersion()}-v${FILL_VERSION}`;

/**
 * A database with `count` messages, from the cache when there is one; filled (and cached) otherwise. Tern may be
 * started on it directly: it is never deleted by the benchmark.
 */
export async function cachedFill(dialect: Dialect, count: number): Promise<FilledDatabase> {
  const key = cacheKey(count);
  mkdirSync(cacheRoot(), { recursive: true });
  if (dialect === 'sqlite') {
    const dir = join(cacheRoot(), `sqlite-${key}`);
    const meta = join(dir, 'meta.json');
    if (existsSync(meta)) {
      progress(`using the filled database ${dir}`);
      return JSON.parse(readFileSync(meta, 'utf8')) as FilledDatabase;
    }
    await forgetOlderFills(dialect, count, key);
    const partial = `${dir}.partial`;
    rmSync(partial, { recursive: true, force: true });
    mkdirSync(partial);
    const filled = await fill('sqlite', `sqlite:${join(partial, 'tern.db')}`, count, true);
    const kept = { ...filled, databaseUrl: `sqlite:${join(dir, 'tern.db')}` };
    writeFileSync(join(partial, 'meta.json'), JSON.stringify(kept, null, 2));
    renameSync(partial, dir);
    return kept;
  }
  const schema = `bench_stored_${key.replace(/[^a-z0-9]/gi, '_').toLowerCase()}`;
  const meta = join(cacheRoot(), `postgres-${key}.json`);
  if (existsSync(meta)) {
    const kept = JSON.parse(readFileSync(meta, 'utf8')) as FilledDatabase;
    if (kept.databaseUrl === postgresUrl(schema) && (await schemaExists(schema))) {
      progress(`using the filled PostgreSQL schema ${schema}`);
      return kept;
    }
    rmSync(meta);
  }
  await forgetOlderFills(dialect, count, key);
  await dropSchema(schema);
  await createSchema(schema);
  const filled = await fill('postgres', postgresUrl(schema), count, true);
  writeFileSync(meta, JSON.stringify(filled, null, 2));
  return filled;
}

/** Deletes the cached fills of the same size made for another schema, fill version or period: one is kept per size. */
async function forgetOlderFills(dialect: Dialect, count: number, key: string): Promise<void> {
  const prefix = `${dialect}-${count}-`;
  for (const name of readdirSync(cacheRoot())) {
    if (!name.startsWith(prefix) || name === `${dialect}-${key}` || name === `${dialect}-${key}.json`) continue;
    const path = join(cacheRoot(), name);
    if (dialect === 'postgres') {
      const schema = new URL((JSON.parse(readFileSync(path, 'utf8')) as FilledDatabase).databaseUrl).searchParams.get('schema');
      if (schema) await dropSchema(schema).catch(() => {});
    }
    progress(`removing the older filled database ${path}`);
    rmSync(path, { recursive: true, force: true });
  }
}

/** A database of its own with `count` messages, deleted by `discard` (a copy of the cached SQLite file). */
export async function freshFill(dialect: Dialect, count: number): Promise<FilledDatabase & { discard(): Promise<void> }> {
  if (dialect === 'sqlite') {
    const cached = await cachedFill('sqlite', count);
    const dir = mkdtempSync(join(tmpdir(), 'tern-bench-'));
    const from = cached.databaseUrl.slice('sqlite:'.length);
    const to = join(dir, 'tern.db');
    copyFileSync(from, to);
    if (existsSync(`${from}-wal`)) copyFileSync(`${from}-wal`, `${to}-wal`);
    return { ...cached, databaseUrl: `sqlite:${to}`, discard: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const schema = await createSchema(schemaName('bench_filled'));
  try {
    return { ...(await fill('postgres', postgresUrl(schema), count, false)), discard: () => dropSchema(schema) };
  } catch (err) {
    await dropSchema(schema);
    throw err;
  }
}

/** Tern makes the schema, the tenants and one message of each kind; then the copies are written in SQL. */
async function fill(dialect: Dialect, databaseUrl: string, count: number, kept: boolean): Promise<FilledDatabase> {
  progress(`filling a ${dialect} database with ${count.toLocaleString('en-US')} messages${kept ? ' (kept for the next runs)' : ''}`);
  const server = await startBenchServer({}, { dialect, databaseUrl });
  let tenants: Awaited<ReturnType<typeof createTenants>>;
  let samples: Sample[];
  try {
    tenants = await createTenants(server.url);
    samples = await sendSamples(server.url, tenants.key);
  } finally {
    await server.stop();
  }
  const lastAt = Date.now();
  const firstAt = lastAt - DAYS * DAY_MS;
  const plan = { count, firstAt, lastAt, channels: tenants.channels, samples };
  const started = Date.now();
  if (dialect === 'sqlite') fillSqlite(databaseUrl.slice('sqlite:'.length), plan);
  else await fillPostgres(new URL(databaseUrl).searchParams.get('schema')!, plan);
  progress(`filled in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  return { databaseUrl, count, firstAt, lastAt, organisationId: tenants.channels[0]!.organisationId, key: tenants.key };
}

async function createTenants(url: string) {
  const admin = (method: string, path: string, body?: unknown) => api(url, method, path, BENCH_ADMIN_KEY, body);
  const channels: Array<{ organisationId: string; channelId: string }> = [];
  for (let o = 0; o < ORGANISATIONS; o++) {
    const org = await admin('POST', '/admin/v1/organisations', { name: `Customer ${o + 1}` });
    await admin('POST', `/admin/v1/organisations/${org.organisationId}/credit`, { amount: 1_000_000 });
    for (let c = 0; c < CHANNELS_PER_ORGANISATION; c++) {
      const channel = await admin('POST', `/admin/v1/organisations/${org.organisationId}/channels`, {
        name: `Customer ${o + 1} ${c === 0 ? 'alerts' : 'marketing'}`,
        type: 'SMS',
        flow: c === 0 ? 'TRANSACTIONAL' : 'MARKETING',
        ...(o === 0 && c === 0 && { defaultFromField: SHORT_CODE }),
      });
      channels.push({ organisationId: org.organisationId, channelId: channel.channelId });
    }
  }
  const cred = await admin('POST', `/admin/v1/channels/${channels[0]!.channelId}/credentials`, { name: 'bench', roles: ['ADMIN'] });
  return { channels, key: cred.value as string };
}

/** One real message per kind, each brought to its final status by the simulator; their ids and shares. */
async function sendSamples(url: string, key: string): Promise<Sample[]> {
  const send = async (to: string) =>
    (await api(url, 'POST', '/sms/v1/messages', key, { recipient: { to }, body: { text: 'Your parcel arrives tomorrow between 9:00 and 12:00.' } }))
      .messageId as string;
  const mt: Array<{ to: string; status: string; share: number }> = [
    { to: '33612345675', status: 'DELIVERED', share: 900 },
    { to: '33612340001', status: 'UNDELIVERED', share: 40 },
    { to: '33612340002', status: 'UNDELIVERABLE', share: 30 },
  ];
  const samples: Sample[] = [];
  for (const m of mt) samples.push({ id: await send(m.to), share: m.share });
  await api(url, 'POST', '/admin/v1/simulator/mo', BENCH_ADMIN_KEY, { from: '33698765435', to: SHORT_CODE, text: 'Merci, à demain' });
  for (let i = 0; ; i++) {
    const statuses = await Promise.all(samples.map(async (s) => (await api(url, 'GET', `/sms/v1/messages/${s.id}`, key)).status.value as string));
    const mo = (await api(url, 'GET', '/sms/v1/messages?searchBy[direction]=MO', key)).items as Array<{ messageId: string }>;
    if (statuses.every((s, k) => s === mt[k]!.status) && mo.length === 1) {
      samples.push({ id: mo[0]!.messageId, share: 30 });
      return samples;
    }
    if (i > 300) throw new Error(`the sample messages did not reach their statuses: ${statuses.join(', ')}, ${mo.length} MO`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

interface Plan {
  count: number;
  firstAt: number;
  lastAt: number;
  channels: Array<{ organisationId: string; channelId: string }>;
  samples: Sample[];
}

/** Channel k gets a share of the traffic proportional to 1/(k+1), as ranges of 0..9999. */
function channelRanges(channels: Plan['channels']): Array<{ lo: number; hi: number; organisationId: string; channelId: string }> {
  const weights = channels.map((_, k) => 1 / (k + 1));
  const total = weights.reduce((a, b) => a + b, 0);
  let lo = 0;
  return channels.map((c, k) => {
    const hi = k === channels.length - 1 ? 10_000 : lo + Math.round((weights[k]! / total) * 10_000);
    const r = { lo, hi, ...c };
    lo = hi;
    return r;
  });
}

function sampleRanges(samples: Sample[]): Array<{ lo: number; hi: number; id: string }> {
  let lo = 0;
  return samples.map((s) => {
    const r = { lo, hi: lo + s.share, id: s.id };
    lo += s.share;
    return r;
  });
}

/** SQL the two dialects write differently. */
interface SqlFlavour {
  hex(expr: string, width: number): string;
  digits(expr: string, width: number): string;
  day(expr: string): string;
}

const SQLITE: SqlFlavour = {
  hex: (e, w) => `printf('%0${w}x', ${e})`,
  digits: (e, w) => `printf('%0${w}d', ${e})`,
  day: (e) => `strftime('%Y-%m-%d', (${e}) / 1000, 'unixepoch')`,
};

const POSTGRES: SqlFlavour = {
  hex: (e, w) => `lpad(to_hex(${e}), ${w}, '0')`,
  digits: (e, w) => `lpad((${e})::text, ${w}, '0')`,
  day: (e) => `to_char(to_timestamp((${e}) / 1000) at time zone 'UTC', 'YYYY-MM-DD')`,
};

/** French networks the copies are spread over (the sample's own is one of them). */
const NETWORKS = [
  { mccMnc: '20801', name: 'Orange' },
  { mccMnc: '20810', name: 'SFR' },
  { mccMnc: '20820', name: 'Bouygues Telecom' },
  { mccMnc: '20815', name: 'Free Mobile' },
];

/** One of `values` by a part of copy n's hash that the channel and kind do not use. */
const pick = (values: string[]) =>
  `case (g.x / 10000000) % ${values.length} ${values.map((v, i) => (i < values.length - 1 ? `when ${i} then '${v}'` : `else '${v}'`)).join(' ')} end`;

/**
 * The select list that makes copy n of sample t for channel s: ids are UUIDv7 of the message's time (unique by n),
 * times spread evenly over the period, recipients drawn from 2 million numbers, four networks; every other column is
 * the sample's.
 */
function copyColumns(columns: string[], f: SqlFlavour, plan: Plan): string {
  const span = plan.lastAt - plan.firstAt;
  const at = `(${plan.firstAt} + (g.n * ${span}) / ${plan.count})`;
  const ts = f.hex(at, 12);
  const number = `'336' || ${f.digits(`(g.n * 48271) % 1999993`, 8)}`;
  const overrides: Record<string, string> = {
    id: `substr(${ts}, 1, 8) || '-' || substr(${ts}, 9, 4) || '-7' || ${f.hex('g.n % 4096', 3)} || '-8' || ${f.hex('(g.n / 4096) % 4096', 3)} || '-' || ${f.hex('g.n', 12)}`,
    organisation_id: 's.organisation_id',
    payer_id: 's.organisation_id',
    channel_id: 's.channel_id',
    recipient: `case when t.direction = 'MO' then t.recipient else ${number} end`,
    sender: `case when t.direction = 'MO' then ${number} else t.sender end`,
    accepted_at: at,
    send_at: `${at} + (t.send_at - t.accepted_at)`,
    status_at: `${at} + (t.status_at - t.accepted_at)`,
    validity_until: `${at} + (t.validity_until - t.accepted_at)`,
    upstream_id: `case when t.upstream_id is null then null else 'b' || g.n end`,
    mcc_mnc: `case when t.mcc_mnc is null then null else ${pick(NETWORKS.map((n) => n.mccMnc))} end`,
    network: `case when t.network is null then null else ${pick(NETWORKS.map((n) => n.name))} end`,
    day: f.day(at),
  };
  return columns.map((c) => overrides[c] ?? `t.${c}`).join(', ');
}

/** The rollups of every MT message, grouped as Tern's pipeline keeps them (rollupKeyOf in src/core/messaging). */
const ROLLUP_SELECT = `select m.organisation_id, m.channel_id, c.type as channel_type, m.day, m.status,
    coalesce(m.mcc_mnc, '') as mcc_mnc, coalesce(m.price_kind, m.type) as price_kind,
    sum(case when m.charged > 0 then m.part_count else 0 end) as quantity, count(*) as messages, sum(m.charged) as amount
  from messages m join channels c on c.id = m.channel_id
  where m.direction = 'MT'
  group by m.organisation_id, m.channel_id, c.type, m.day, m.status, coalesce(m.mcc_mnc, ''), coalesce(m.price_kind, m.type)`;
const ROLLUP_COLUMNS = 'organisation_id, channel_id, channel_type, day, status, mcc_mnc, price_kind, quantity, messages, amount';
const ROLLUP_KEY = 'organisation_id, channel_id, day, status, mcc_mnc, price_kind';
/** What Tern wrote, a row per key: writers spread a key over shards, readers add them up. */
const WRITTEN_ROLLUPS = `select organisation_id, channel_id, channel_type, day, status, mcc_mnc, price_kind,
    sum(quantity) as quantity, sum(messages) as messages, sum(amount) as amount
  from consumption_rollups group by organisation_id, channel_id, channel_type, day, status, mcc_mnc, price_kind`;
const ZERO_ROLLUPS = `select distinct status from (${WRITTEN_ROLLUPS}) w where quantity = 0 and messages = 0 and amount = 0`;
/** Tern leaves a zero row behind in the status a message left (ENROUTE): the copies get them too. */
const zeroRollupsInsert = (statuses: string[]) =>
  statuses.length === 0
    ? null
    : `insert into consumption_rollups (${ROLLUP_COLUMNS})
  select distinct m.organisation_id, m.channel_id, c.type, m.day, z.status, coalesce(m.mcc_mnc, ''), coalesce(m.price_kind, m.type), 0, 0, 0
  from messages m join channels c on c.id = m.channel_id
  cross join (${statuses.map((s) => `select '${s.replace(/'/g, "''")}' as status`).join(' union all ')}) z
  where m.direction = 'MT'
  on conflict (${ROLLUP_KEY}, shard) do nothing`;

type RollupRow = Record<string, string | number>;
const canonical = (rows: RollupRow[]) =>
  rows
    .map((r) =>
      ROLLUP_COLUMNS.split(', ')
        .map((c) => String(r[c]))
        .join('|'),
    )
    .sort()
    .join('\n');

/** The fill rebuilds the rollups from the messages: that must give what Tern itself wrote for the samples. */
function checkRollupRule(written: RollupRow[], computed: RollupRow[]): void {
  const nonZero = (rows: RollupRow[]) => rows.filter((r) => Number(r['quantity']) !== 0 || Number(r['messages']) !== 0 || Number(r['amount']) !== 0);
  const a = canonical(nonZero(written));
  const b = canonical(computed);
  if (a !== b) throw new Error(`the consumption rollups Tern wrote for the sample messages are not what the fill would compute:\nTern:\n${a}\nfill:\n${b}`);
}

function fillSqlite(file: string, plan: Plan): void {
  const db = new Database(file);
  try {
    db.pragma('journal_mode = DELETE');
    db.pragma('synchronous = OFF');
    db.pragma('cache_size = -1048576');
    checkRollupRule(db.prepare(WRITTEN_ROLLUPS).all() as RollupRow[], db.prepare(ROLLUP_SELECT).all() as RollupRow[]);
    const zeroStatuses = (db.prepare(ZERO_ROLLUPS).all() as Array<{ status: string }>).map((r) => r.status);
    const columns = (db.prepare('pragma table_info(messages)').all() as Array<{ name: string }>).map((c) => c.name);
    const indexes = db.prepare(`select name, sql from sqlite_master where type = 'index' and tbl_name = 'messages' and sql is not null`).all() as Array<{
      name: string;
      sql: string;
    }>;
    db.exec('create temp table bench_channels (lo integer, hi integer, organisation_id text, channel_id text)');
    db.exec('create temp table bench_kinds (lo integer, hi integer, sample_id text)');
    db.exec(`create temp table bench_samples as select * from messages where id in (${plan.samples.map((s) => `'${s.id}'`).join(', ')})`);
    const addChannel = db.prepare('insert into bench_channels values (?, ?, ?, ?)');
    for (const r of channelRanges(plan.channels)) addChannel.run(r.lo, r.hi, r.organisationId, r.channelId);
    const addKind = db.prepare('insert into bench_kinds values (?, ?, ?)');
    for (const r of sampleRanges(plan.samples)) addKind.run(r.lo, r.hi, r.id);
    for (const i of indexes) db.exec(`drop index "${i.name}"`);
    const insert = db.prepare(`with recursive g(n) as (select cast(? as integer) union all select n + 1 from g where n < cast(? as integer)),
      h(n, x) as (select n, (n * 2654435761) % 4294967296 from g)
      insert into messages (${columns.join(', ')})
      select ${copyColumns(columns, SQLITE, plan)}
      from h g
      join bench_channels s on g.x % 10000 >= s.lo and g.x % 10000 < s.hi
      join bench_kinds k on (g.x / 10000) % 1000 >= k.lo and (g.x / 10000) % 1000 < k.hi
      join bench_samples t on t.id = k.sample_id`);
    for (let from = 0; from < plan.count; from += CHUNK) {
      const to = Math.min(plan.count, from + CHUNK) - 1;
      db.transaction(() => insert.run(from, to))();
      progress(`  ${(to + 1).toLocaleString('en-US')} messages`);
    }
    for (const i of indexes) {
      progress(`  index ${i.name}`);
      db.exec(i.sql);
    }
    progress('  consumption rollups');
    db.transaction(() => {
      db.exec('delete from consumption_rollups');
      db.exec(`insert into consumption_rollups (${ROLLUP_COLUMNS}) ${ROLLUP_SELECT}`);
      const zeros = zeroRollupsInsert(zeroStatuses);
      if (zeros) db.exec(zeros);
    })();
  } finally {
    db.close();
  }
}

async function fillPostgres(schema: string, plan: Plan): Promise<void> {
  await withPostgres(async (c: pg.Client) => {
    await c.query(`set search_path = ${schema}`);
    await c.query('set synchronous_commit = off');
    await c.query(`set maintenance_work_mem = '512MB'`);
    await c.query(`set work_mem = '256MB'`);
    checkRollupRule((await c.query(WRITTEN_ROLLUPS)).rows, (await c.query(ROLLUP_SELECT)).rows);
    const zeroStatuses = (await c.query(ZERO_ROLLUPS)).rows.map((r: { status: string }) => r.status);
    const columns = (
      await c.query(`select column_name from information_schema.columns where table_schema = $1 and table_name = 'messages' order by ordinal_position`, [
        schema,
      ])
    ).rows.map((r: { column_name: string }) => r.column_name);
    const indexes = (
      await c.query(
        `select i.indexname, i.indexdef from pg_indexes i
         where i.schemaname = $1 and i.tablename = 'messages'
           and not exists (select 1 from pg_constraint k join pg_namespace n on n.oid = k.connamespace where n.nspname = $1 and k.conname = i.indexname)`,
        [schema],
      )
    ).rows as Array<{ indexname: string; indexdef: string }>;
    await c.query('create temp table bench_channels (lo integer, hi integer, organisation_id text, channel_id text)');
    await c.query('create temp table bench_kinds (lo integer, hi integer, sample_id text)');
    await c.query(`create temp table bench_samples as select * from messages where id = any($1)`, [plan.samples.map((s) => s.id)]);
    for (const r of channelRanges(plan.channels))
      await c.query('insert into bench_channels values ($1, $2, $3, $4)', [r.lo, r.hi, r.organisationId, r.channelId]);
    for (const r of sampleRanges(plan.samples)) await c.query('insert into bench_kinds values ($1, $2, $3)', [r.lo, r.hi, r.id]);
    for (const i of indexes) await c.query(`drop index ${schema}."${i.indexname}"`);
    for (let from = 0; from < plan.count; from += CHUNK) {
      const to = Math.min(plan.count, from + CHUNK) - 1;
      await c.query(`insert into messages (${columns.join(', ')})
        select ${copyColumns(columns, POSTGRES, plan)}
        from (select n, (n * 2654435761) % 4294967296 as x from generate_series(${from}::bigint, ${to}::bigint) as n) g
        join bench_channels s on g.x % 10000 >= s.lo and g.x % 10000 < s.hi
        join bench_kinds k on (g.x / 10000) % 1000 >= k.lo and (g.x / 10000) % 1000 < k.hi
        join bench_samples t on t.id = k.sample_id`);
      progress(`  ${(to + 1).toLocaleString('en-US')} messages`);
    }
    for (const i of indexes) {
      progress(`  index ${i.indexname}`);
      await c.query(i.indexdef);
    }
    progress('  consumption rollups');
    await c.query('begin');
    await c.query('delete from consumption_rollups');
    await c.query(`insert into consumption_rollups (${ROLLUP_COLUMNS}) ${ROLLUP_SELECT}`);
    const zeros = zeroRollupsInsert(zeroStatuses);
    if (zeros) await c.query(zeros);
    await c.query('commit');
    // What autovacuum does on its own after a load like this one (and over the days real traffic would have taken).
    await c.query('vacuum analyze messages');
    await c.query('vacuum analyze consumption_rollups');
  });
}
