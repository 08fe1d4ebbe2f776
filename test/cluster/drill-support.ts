// What the cluster drills share: several real Tern processes on one PostgreSQL database, a load spread over them,
// and what the operator and the webhook receiver saw once everything settled.
import { openStore, type Store } from '../../src/store/db.ts';
import { freePort, startTernProcess, type TernProcess } from '../support/process.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { freshDatabase, request } from '../support/server.ts';
import { eventually, sleep } from '../support/wait.ts';

export const skip = process.env.TERN_TEST_DATABASE_URL ? false : 'PostgreSQL not available: TERN_TEST_DATABASE_URL is not set';

// A short lease, and submits slow enough that a stall lands while batches are claimed and not yet sent.
/** Nodes started together on a machine busy with other tests may take a while to be ready. */
const START_WITHIN_MS = 90_000;
const ENV = { TERN_DISPATCH_LEASE_SECONDS: '2', TERN_SIMULATOR_SUBMIT_LATENCY_MS: '300', TERN_SIMULATOR_RECEIPT_LATENCY_MS: '100' };

export interface Cluster {
  nodes: TernProcess[];
  /** Each node's id (`TERN_NODE_ID`), as its claims record it. */
  nodeIds: string[];
  reader: Store;
  receiver: Receiver;
  close(): Promise<void>;
}

export async function startCluster(size: number): Promise<Cluster> {
  const database = await freshDatabase('postgres');
  // The first node creates the schema; the others start on it together.
  const nodeIds = Array.from({ length: size }, (_, i) => `drill-node-${i}`);
  // A node that does not come up leaves none of the others running: a process left behind would keep the test
  // file's process alive after the test failed, and the suite with it.
  const started: TernProcess[] = [];
  const start = async (id: string) => {
    const node = await startTernProcess(database.url, await freePort(), { ...ENV, TERN_NODE_ID: id }, START_WITHIN_MS);
    started.push(node);
    return node;
  };
  let nodes: TernProcess[];
  try {
    const first = await start(nodeIds[0]!);
    const rest = await Promise.allSettled(nodeIds.slice(1).map(start));
    const failed = rest.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
    nodes = [first, ...rest.map((r) => (r as PromiseFulfilledResult<TernProcess>).value)];
  } catch (err) {
    await Promise.all(started.map((n) => n.kill()));
    await database.cleanup();
    throw err;
  }
  const reader = await openStore(database.url, 'drill-reader', { migrate: false });
  // Answers a moment later, so attempts are on the wire when a node stalls.
  const receiver = await startReceiver();
  receiver.respond = (_r, res) => {
    setTimeout(() => res.writeHead(200).end('ok'), 20);
  };
  return {
    nodes,
    nodeIds,
    reader,
    receiver,
    async close() {
      await Promise.all(nodes.map((n) => n.kill()));
      await reader.close();
      await receiver.close();
      await database.cleanup();
    },
  };
}

/** A counter of a node's /metrics, summed over the series whose labels include `labels`. */
export async function counter(node: Pick<TernProcess, 'url'>, name: string, labels: string[] = []): Promise<number> {
  const text = await (await fetch(`${node.url}/metrics`)).text();
  return text
    .split('\n')
    .filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `))
    .filter((l) => labels.every((x) => l.includes(x)))
    .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}

/**
 * Waits until the node `nodeId` holds messages it claimed (or was handed) with at least `leftMs` of their lease to
 * go: a stall or a kill that follows at once lands while it has work in hand, whatever the machine's speed. A fixed
 * delay after the load starts did not (under load the node sometimes held nothing at that moment).
 */
export async function holdingClaims(db: Store['db'], nodeId: string, leftMs = 500): Promise<void> {
  await eventually(
    async () => {
      const row = await db
        .selectFrom('dispatch_queue')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('claimed_by', '=', nodeId)
        .where('lease_until', '>', Date.now() + leftMs)
        .executeTakeFirstOrThrow();
      return Number(row.n) > 0;
    },
    60_000,
    `${nodeId} to hold claimed messages`,
  );
}

/**
 * Sends `total` messages spread over the nodes, 24 at a time, each with an Idempotency-Key, as a careful client does:
 * an answer other than 201 (a node stalled or killed mid-request, a 503 while its database did not answer, a 409
 * while the key's first try is in progress) is tried again with the same key on the next node, until `deadline`.
 * Answers the ids accepted (201, replays included) and every other answer seen, counted by status.
 */
export function sendSpread(
  nodes: TernProcess[],
  key: string,
  total: number,
  deadline = Date.now() + 120_000,
): { accepted: string[]; refused: Map<string, number>; done: Promise<unknown> } {
  const accepted: string[] = [];
  const refused = new Map<string, number>();
  let next = 0;
  const sendOne = async (i: number) => {
    for (let attempt = 0; Date.now() < deadline; attempt++) {
      const node = nodes[(i + attempt) % nodes.length]!;
      const r = await request(node, 'POST', '/sms/v1/messages', {
        key,
        headers: { 'idempotency-key': `drill-${i}` },
        body: { recipient: { to: `3367${String(i).padStart(6, '0')}5` }, body: { text: `drill ${i}` } },
      }).catch((err: Error) => ({ status: 0, body: { messageId: '' }, error: err }));
      if (r.status === 201) {
        accepted.push(r.body.messageId);
        return;
      }
      const what = r.status === 0 ? 'no answer' : String(r.status);
      refused.set(what, (refused.get(what) ?? 0) + 1);
      await sleep(100);
    }
  };
  const sender = async () => {
    for (let i = next++; i < total; i = next++) await sendOne(i);
  };
  return { accepted, refused, done: Promise.all(Array.from({ length: 24 }, sender)) };
}

/** Waits for every message and every webhook delivery to be delivered; answers what the operator and the receiver saw. */
export async function settled(db: Store['db'], receiver: Receiver) {
  await eventually(
    async () => {
      const open = await db
        .selectFrom('messages')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('status', '!=', 'DELIVERED')
        .executeTakeFirstOrThrow();
      const hooks = await db
        .selectFrom('webhook_deliveries')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('state', '!=', 'DELIVERED')
        .executeTakeFirstOrThrow();
      return Number(open.n) === 0 && Number(hooks.n) === 0 ? true : undefined;
    },
    60_000,
    'every message and every webhook delivered',
  );
  const messages = await db.selectFrom('messages').select('id').execute();
  // Placements are keyed by message and attempt; the simulated handsets' inboxes are kept beside them.
  const records = await db.selectFrom('connector_records').select(['key', 'data']).where('connector', '=', 'simulator').execute();
  const placements = records
    .filter((r) => !r.key.startsWith('handset'))
    .map((r) => JSON.parse(r.data) as { accepted?: boolean; duplicates?: number })
    .filter((d) => d.accepted);
  const delivered = await db.selectFrom('message_events').select('message_id').where('status', '=', 'DELIVERED').execute();
  const deliveries = await db.selectFrom('webhook_deliveries').select('id').execute();
  const arrivals = new Map<string, number>();
  for (const r of receiver.requests) arrivals.set(String(r.headers['webhook-id']), (arrivals.get(String(r.headers['webhook-id'])) ?? 0) + 1);
  return {
    stored: new Set(messages.map((m) => m.id)),
    placements: placements.length,
    repeated: placements.filter((d) => (d.duplicates ?? 0) > 0).length,
    deliveredEvents: delivered.length,
    deliveredMessages: new Set(delivered.map((e) => e.message_id)).size,
    unreceived: deliveries.filter((d) => !arrivals.has(d.id)).length,
    twice: [...arrivals.values()].filter((n) => n > 1).length,
  };
}
