// Database drills on PostgreSQL: a real Tern process whose database connections are ended, then frozen, under load
// over HTTP and SMPP. In both, the process never exits, every request is answered (201, or 503 with Retry-After;
// SMPP: 0 or ESME_RSYSERR with the bind kept), and every message answered as accepted is stored and delivered.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { openStore, type Store } from '../../src/store/db.ts';
import { SmppStatus } from '../../src/protocols/smpp/pdu.ts';
import { freePort, startTernProcess, type TernProcess } from '../support/process.ts';
import { createTenant, freshDatabase, request, type Tenant } from '../support/server.ts';
import { eventually, sleep } from '../support/wait.ts';
import { type Answer, backendsOf, cannotFreeze, freeze, httpLoad, legacyLoad, smppLoad, terminateBackends } from './database-faults.ts';

const PG_URL = process.env.TERN_TEST_DATABASE_URL;
const skip = PG_URL ? false : 'PostgreSQL not available: TERN_TEST_DATABASE_URL is not set';

interface Drill {
  node: TernProcess;
  nodeId: string;
  smppPort: number;
  tenant: Tenant;
  systemId: string;
  password: string;
  reader: Store;
  admin: pg.Client;
  close(): Promise<void>;
}

async function startDrill(name: string, env: Record<string, string> = {}): Promise<Drill> {
  const database = await freshDatabase('postgres');
  const nodeId = `${name}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  const smppPort = await freePort();
  const node = await startTernProcess(database.url, await freePort(), {
    TERN_NODE_ID: nodeId,
    TERN_SMPP_PORT: String(smppPort),
    TERN_SIMULATOR_RECEIPT_LATENCY_MS: '20',
    // Messages the node held when its database failed are claimed again when their lease runs out: soon, here.
    TERN_DISPATCH_LEASE_SECONDS: '5',
    ...env,
  });
  const tenant = await createTenant(node, { balance: 10_000 });
  const systemId = `drill${Math.random().toString(36).slice(2, 8)}`;
  const password = 'drill-pw';
  const cred = await request(node, 'POST', `/admin/v1/channels/${tenant.channelId}/smpp-credentials`, { key: node.adminKey, body: { systemId, password } });
  assert.equal(cred.status, 201, cred.text);
  const reader = await openStore(database.url, `${nodeId}-reader`, { migrate: false });
  const admin = new pg.Client({ connectionString: PG_URL, application_name: 'tern drill admin' });
  await admin.connect();
  return {
    node,
    nodeId,
    smppPort,
    tenant,
    systemId,
    password,
    reader,
    admin,
    async close() {
      await node.kill();
      await reader.close();
      await admin.end();
      await database.cleanup();
    },
  };
}

function alive(node: TernProcess): boolean {
  return node.child.exitCode === null && node.child.signalCode === null;
}

/** Every id answered as accepted is stored, and reaches DELIVERED (the simulator delivers every number used). */
async function everyAcceptedDelivered(reader: Store, ids: string[]): Promise<void> {
  assert.equal(new Set(ids).size, ids.length, 'no id answered twice');
  await eventually(
    async () => {
      const rows: Array<{ id: string; status: string }> = [];
      for (let i = 0; i < ids.length; i += 500) {
        rows.push(
          ...(await reader.db
            .selectFrom('messages')
            .select(['id', 'status'])
            .where('id', 'in', ids.slice(i, i + 500))
            .execute()),
        );
      }
      const missing = ids.length - rows.length;
      assert.equal(missing, 0, `${missing} messages answered as accepted are not in the database`);
      const open = rows.filter((r) => r.status !== 'DELIVERED');
      if (open.length === 0) return true;
      const by = new Map<string, number>();
      for (const r of open) by.set(r.status, (by.get(r.status) ?? 0) + 1);
      throw new Error(`${open.length} not delivered yet (${[...by].map(([s, n]) => `${s}: ${n}`).join(', ')}; e.g. ${open[0]!.id})`);
    },
    60_000,
    'every accepted message delivered',
  );
}

function summary(answers: Answer[]): string {
  const by = new Map<number, number>();
  for (const a of answers) by.set(a.status, (by.get(a.status) ?? 0) + 1);
  return [...by].map(([s, n]) => `${s}: ${n}`).join(', ');
}

describe('database drill: connections ended under load [postgres]', { skip }, () => {
  let drill: Drill;
  before(async () => {
    drill = await startDrill('drill-terminate');
  });
  after(async () => drill?.close());

  test('pg_terminate_backend on every backend of the node, 5 times, while sends run over HTTP and SMPP', async () => {
    const { node, nodeId, admin } = drill;
    let stop = false;
    const http = httpLoad(node.url, drill.tenant.key, 8, () => stop, 'terminate');
    const esme = await smppLoad(drill.smppPort, drill.systemId, drill.password, 4, () => stop);
    const ended: number[] = [];
    let lastEndedAt = 0;
    try {
      await sleep(500);
      for (let round = 0; round < 5; round++) {
        ended.push(await terminateBackends(admin, nodeId));
        lastEndedAt = Date.now();
        await sleep(700);
        assert.ok(alive(node), `the node exited after round ${round + 1} (code ${node.child.exitCode}, signal ${node.child.signalCode})`);
      }
      // After the last round, sends go on: they must be accepted again, by themselves.
      await eventually(
        async () => (http.answers.some((a) => a.at > lastEndedAt + 200 && a.status === 201) ? true : undefined),
        20_000,
        'a send accepted after the last round',
      );
    } finally {
      stop = true;
      await http.done;
      await esme.done;
    }
    const smppClosed = esme.closed();
    esme.close();
    process.stdout.write(`# connections ended 5 times (${ended.join(', ')} backends): HTTP ${summary(http.answers)}; SMPP ${summary(esme.answers)}\n`);
    assert.ok(
      ended.every((n) => n > 0),
      'every round ended some backends',
    );
    assert.ok(alive(node), 'the node is running');
    assert.equal(smppClosed, false, 'the SMPP bind was kept');
    assert.deepEqual(
      http.answers.filter((a) => a.status !== 201 && a.status !== 503),
      [],
      'every HTTP send answered 201 or 503',
    );
    for (const a of http.answers.filter((x) => x.status === 503)) {
      assert.equal(a.errorCode, '503.002');
      assert.ok(Number(a.retryAfter) > 0, 'a 503 says when to try again');
    }
    assert.deepEqual(
      esme.answers.filter((a) => a.status !== 0 && a.status !== SmppStatus.ESME_RSYSERR),
      [],
      'every submit_sm answered 0 or ESME_RSYSERR',
    );
    const accepted = [...http.answers, ...esme.answers].flatMap((a) => (a.id ? [a.id] : []));
    assert.ok(accepted.length > 50, `sends were accepted (${accepted.length})`);
    await everyAcceptedDelivered(drill.reader, accepted);
    const ready = await request(node, 'GET', '/readyz');
    assert.equal(ready.status, 200, ready.text);
    // The listening connection came back too: the node holds one again.
    await eventually(async () => ((await backendsOf(admin, nodeId)).length > 1 ? true : undefined), 20_000, 'the node connected again');
  });
});

describe('database drill: the database frozen past the statement timeout [postgres]', { skip }, () => {
  const STATEMENT_TIMEOUT_MS = 2_000;
  const CONNECT_TIMEOUT_MS = 2_000;
  let drill: Drill;
  before(async () => {
    drill = await startDrill('drill-freeze', {
      TERN_DB_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS),
      TERN_DB_CONNECT_TIMEOUT_MS: String(CONNECT_TIMEOUT_MS),
    });
  });
  after(async () => drill?.close());

  test('SIGSTOP on the node’s backends for 3× the statement timeout: fast 503s, /readyz not ready, then everything resumes by itself', async (t) => {
    const { node, nodeId, admin } = drill;
    const why = await cannotFreeze(admin, nodeId);
    if (why) {
      t.skip(why);
      return;
    }
    let stop = false;
    const http = httpLoad(node.url, drill.tenant.key, 6, () => stop, 'freeze');
    const legacy = legacyLoad(node.url, drill.tenant.key, () => stop);
    const esme = await smppLoad(drill.smppPort, drill.systemId, drill.password, 2, () => stop);
    const readiness: Array<{ status: number; ms: number }> = [];
    let frozenAt = 0;
    let thawedAt = 0;
    try {
      await sleep(800);
      const frozen = freeze(admin, nodeId);
      frozenAt = Date.now();
      try {
        const freezeMs = 3 * STATEMENT_TIMEOUT_MS;
        while (Date.now() - frozenAt < freezeMs) {
          const started = Date.now();
          const r = await request(node, 'GET', '/readyz').catch(() => null);
          readiness.push({ status: r?.status ?? 0, ms: Date.now() - started });
          await sleep(300);
        }
      } finally {
        await frozen.thaw();
        thawedAt = Date.now();
        process.stdout.write(`# ${frozen.stopped.size} backends frozen for ${thawedAt - frozenAt} ms\n`);
      }
      // Everything resumes by itself: ready again, and sends accepted.
      await eventually(async () => ((await request(node, 'GET', '/readyz')).status === 200 ? true : undefined), 30_000, '/readyz ready after the thaw');
      await eventually(
        async () => (http.answers.some((a) => a.at > thawedAt && a.status === 201) ? true : undefined),
        30_000,
        'a send accepted after the thaw',
      );
    } finally {
      stop = true;
      await http.done;
      await legacy.done;
      await esme.done;
    }
    const smppClosed = esme.closed();
    esme.close();
    // Sends under way at some moment of the freeze: those it caught in flight too.
    const during = http.answers.filter((a) => a.at < thawedAt && a.at + a.ms > frozenAt);
    const slowest = Math.max(0, ...during.map((a) => a.ms));
    process.stdout.write(
      `# frozen: HTTP ${summary(http.answers)} (during the freeze: ${summary(during)}, slowest ${slowest} ms); legacy ${summary(legacy.answers)}; SMPP ${summary(esme.answers)}; ` +
        `/readyz during the freeze: ${readiness.map((r) => `${r.status} in ${r.ms} ms`).join(', ')}\n`,
    );
    assert.ok(alive(node), 'the node is running');
    assert.equal(smppClosed, false, 'the SMPP bind was kept');
    assert.deepEqual(
      http.answers.filter((a) => a.status !== 201 && a.status !== 503),
      [],
      'every HTTP send answered 201 or 503',
    );
    assert.ok(
      during.some((a) => a.status === 503),
      'sends were refused with 503 while frozen',
    );
    // The legacy interface answers in its own format: `0 | Accepted | id`, or `50 | Temporarily unavailable: …`.
    for (const a of legacy.answers) {
      if (a.status === 200) assert.match(a.line, /^0 \| Accepted \| \S+$/);
      else {
        assert.equal(a.status, 503, a.line);
        assert.match(a.line, /^50 \| Temporarily unavailable: /);
        assert.ok(Number(a.retryAfter) > 0, 'a 503 says when to try again');
      }
    }
    assert.ok(
      legacy.answers.some((a) => a.status === 503),
      `legacy sends were refused while frozen: ${summary(legacy.answers)}`,
    );
    // A request waits at most for the statement timeout, the client's margin past it (2 s) and the probe (2 s) that
    // tells an unknown commit: well under the freeze, with room for a loaded machine.
    const bound = STATEMENT_TIMEOUT_MS + 2_000 + 2_000 + 3_000;
    assert.ok(slowest <= bound, `the slowest send during the freeze took ${slowest} ms (bound ${bound} ms)`);
    assert.ok(
      readiness.some((r) => r.status === 503),
      '/readyz said not ready while frozen',
    );
    assert.ok(
      readiness.every((r) => r.status !== 0 && r.ms <= 2_000 + 2_000),
      `/readyz answered within its timeout: ${readiness.map((r) => r.ms).join(', ')}`,
    );
    assert.deepEqual(
      esme.answers.filter((a) => a.status !== 0 && a.status !== SmppStatus.ESME_RSYSERR),
      [],
      'every submit_sm answered 0 or ESME_RSYSERR',
    );
    const accepted = [...http.answers, ...legacy.answers, ...esme.answers].flatMap((a) => (a.id ? [a.id] : []));
    await everyAcceptedDelivered(drill.reader, accepted);
  });
});
