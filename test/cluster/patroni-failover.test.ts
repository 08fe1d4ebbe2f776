// The PostgreSQL failover drill: two Tern processes on a Patroni cluster (a primary and a synchronous replica, etcd,
// HAProxy routing to the primary) and steady sends through both, while the primary changes twice: a planned
// switchover (the primary demoted to a replica, still answering, read-only), then the new primary killed (kill -9
// of its Patroni and its postmaster) so that the replica is promoted. No node may exit, every request must be
// answered 201 or 503, sends must resume by themselves once the new primary is reachable, and every 201 must be in
// the last primary and reach a final status.
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { describe, test } from 'node:test';
import pg from 'pg';
import { PATRONI_TIMING, type PatroniCluster, patroniMissing, startPatroniCluster } from '../support/patroni.ts';
import { freePort, startTernProcess, type TernProcess } from '../support/process.ts';
import { createTenant, request } from '../support/server.ts';
import { eventually, sleep } from '../support/wait.ts';

const missing = patroniMissing();
if (missing) process.stderr.write(`*** Patroni failover drill SKIPPED: ${missing} ***\n`);

/** Sends a second, both nodes together, and the steady sending before each change of primary. */
const RATE = 60;
const STEADY_MS = 2_500;
/** Sending goes on this long once both nodes have resumed after the kill. */
const AFTER_RESUME_MS = 3_000;
/** A request not answered within this is a failure: a node must answer 503 rather than hold a client. */
const ANSWER_BOUND_MS = 15_000;
/**
 * How long after the new primary is reachable through HAProxy each node must be sending again. A node that found
 * the database down probes it every half-second (each probe waiting up to 2 s) and serves again after two probes in a
 * row answered: 1 to 3 s in the drill's runs; the rest is room for a busy machine.
 */
const RESUME_SLACK_MS = 8_000;
/** The dispatch lease and safety poll of the drill's nodes (30 s each by default). */
const LEASE_SECONDS = 5;
/** Every 201 reaches its final status within this once sending stops: a lease and a safety poll, with room to spare. */
const FINAL_BOUND_MS = (4 * LEASE_SECONDS + 10) * 1_000;
/** A price set on one node once sends resume is quoted by the other within this (LISTEN/NOTIFY, back on the new primary). */
const PROPAGATION_BOUND_MS = 2_000;
/** The failover itself: the leader key's TTL, two HA loops, the promotion and HAProxy's checks, with room to spare. */
const FAILOVER_BOUND_MS = (PATRONI_TIMING.ttl + 4 * PATRONI_TIMING.loop_wait + 10) * 1_000;

interface Outcome {
  node: number;
  sentAt: number;
  answeredAt: number;
  /** The HTTP status, or the error that stood for an answer (refused, reset, timed out). */
  status?: number;
  error?: string;
  messageId?: string;
  retryAfter?: string | null;
  body?: string;
}

/** Open-loop sends at RATE a second, alternating between the nodes, until `stop()`; each outcome recorded. */
function steadySends(nodes: TernProcess[], key: string) {
  const outcomes: Outcome[] = [];
  const inFlight = new Set<Promise<void>>();
  let stopped = false;
  const sendOne = (i: number) => {
    const node = i % nodes.length;
    const sentAt = performance.now();
    const p = fetch(`${nodes[node]!.url}/sms/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ recipient: { to: `3367${String(i).padStart(6, '0')}5` }, body: { text: `failover ${i}` } }),
      signal: AbortSignal.timeout(ANSWER_BOUND_MS),
    })
      .then(async (res) => {
        const text = await res.text();
        const o: Outcome = { node, sentAt, answeredAt: performance.now(), status: res.status, retryAfter: res.headers.get('retry-after') };
        if (res.status === 201) o.messageId = JSON.parse(text).messageId;
        else o.body = text.slice(0, 300);
        outcomes.push(o);
      })
      .catch((err: Error & { cause?: { code?: string } }) => {
        outcomes.push({
          node,
          sentAt,
          answeredAt: performance.now(),
          error: err.name === 'TimeoutError' ? `no answer in ${ANSWER_BOUND_MS} ms` : (err.cause?.code ?? err.message),
        });
      })
      .finally(() => inFlight.delete(p));
    inFlight.add(p);
  };
  const started = performance.now();
  const loop = (async () => {
    for (let i = 0; !stopped; i++) {
      const due = started + (i * 1_000) / RATE;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      if (!stopped) sendOne(i);
    }
  })();
  return {
    outcomes,
    async stop() {
      stopped = true;
      await loop;
      await Promise.all([...inFlight]);
    },
  };
}

/** Time from `from` until the database answers writable through HAProxy on another port than `oldPort`. */
async function newPrimaryReachable(url: string, oldPort: number, from: number, boundMs: number): Promise<number> {
  return eventually(
    async () => {
      const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1_000, query_timeout: 1_000 });
      c.on('error', () => {});
      try {
        await c.connect();
        const r = await c.query('select not pg_is_in_recovery() as writable, inet_server_port() as port');
        return r.rows[0].writable && r.rows[0].port !== oldPort ? performance.now() - from : undefined;
      } catch (err) {
        // No server yet: HAProxy closes at once; tried again shortly, not in a tight loop.
        await sleep(50);
        throw err;
      } finally {
        await c.end().catch(() => {});
      }
    },
    boundMs,
    'the new primary, writable through HAProxy',
  );
}

function tally(values: string[]): string {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts].map(([v, n]) => `${v} × ${n}`).join(', ');
}

describe('PostgreSQL failover under Patroni', () => {
  test(
    'two nodes through HAProxy, a switchover then the primary killed under steady sends: no node exits, every request answered 201 or 503, sends resume by themselves, every 201 kept and delivered',
    { skip: missing ? `Patroni failover drill: ${missing}` : false, timeout: 180_000 },
    async () => {
      let cluster: PatroniCluster | undefined;
      const terns: TernProcess[] = [];
      try {
        const startedAt = performance.now();
        cluster = await startPatroniCluster();
        const clusterReadyMs = performance.now() - startedAt;
        const url = new URL(cluster.url);
        url.searchParams.set('pool', '4');
        // Work a node had in hand when the primary died (messages handed to its dispatcher, receipts being applied)
        // stays leased to it and is taken again when the lease runs out: a short lease keeps the drill short.
        const env = {
          TERN_SIMULATOR_RECEIPT_LATENCY_MS: '20',
          TERN_DISPATCH_LEASE_SECONDS: String(LEASE_SECONDS),
          TERN_SAFETY_POLL_SECONDS: String(LEASE_SECONDS),
        };
        // The first node creates the schema, then the second starts on it.
        terns.push(await startTernProcess(url.toString(), await freePort(), { ...env, TERN_NODE_ID: 'failover-0' }));
        terns.push(await startTernProcess(url.toString(), await freePort(), { ...env, TERN_NODE_ID: 'failover-1' }));
        const exits: string[] = [];
        terns.forEach((t, i) => t.child.once('exit', (code, signal) => exits.push(`node ${i} exited (code ${code}, signal ${signal})`)));
        const allExited = () => exits.length === terns.length;
        const ternsReadyMs = performance.now() - startedAt - clusterReadyMs;
        const tenant = await createTenant(terns[0]!, { balance: 10_000 });

        const quote = async (node: TernProcess) =>
          (await request(node, 'POST', '/sms/v1/messages/quote', { key: tenant.key, body: { recipient: { to: '33612345678' }, body: { text: 'price' } } })).body
            ?.price?.amount;
        const newPrice = (await quote(terns[1]!)) === 0.5 ? 0.25 : 0.5;

        const load = steadySends(terns, tenant.key);
        /** Each node's first 201 to a request sent after `t`: the new primary at work through that node. */
        const resumed = (node: number, t: number) => load.outcomes.find((o) => o.node === node && o.status === 201 && o.sentAt > t);
        const bothResumed = async (t: number, boundMs: number) => {
          const deadline = performance.now() + boundMs;
          while (performance.now() < deadline && !terns.every((_, i) => resumed(i, t)) && !allExited()) await sleep(50);
          return terns.map((_, i) => resumed(i, t)?.answeredAt);
        };
        await sleep(STEADY_MS);
        const before = load.outcomes.filter((o) => o.status === 201).length;

        // A planned switchover: the primary is demoted and follows the replica it hands over to.
        const first = await cluster.leader();
        const second = cluster.nodes.find((n) => n !== first)!;
        const switchedAt = performance.now();
        await cluster.switchover(first, second);
        // Patroni checkpoints before it demotes: on a busy disk that takes what it takes, it is not the drill's measure.
        const switchoverMs = await newPrimaryReachable(cluster.url, first.pgPort, switchedAt, 60_000);
        const afterSwitchover = await bothResumed(switchedAt + switchoverMs, RESUME_SLACK_MS + 10_000);
        // The demoted primary is the synchronous standby again before the next change.
        await cluster.synchronous(60_000);
        await sleep(STEADY_MS);

        // The new primary killed: its replica (the first primary) is promoted when the leader key runs out.
        const old = await cluster.leader();
        assert.equal(old.name, second.name, 'the switchover made the replica the leader');
        const killedAt = performance.now();
        const killedWall = Date.now();
        cluster.kill(old);
        const failoverMs = await newPrimaryReachable(cluster.url, old.pgPort, killedAt, FAILOVER_BOUND_MS);
        const promoted = await cluster.leader(10_000, old);
        const afterKill = await bothResumed(killedAt, failoverMs + RESUME_SLACK_MS + 10_000);

        // A change made on one node once sends resume reaches the other at once: its LISTEN connection is back too.
        let priceSeen: number | undefined;
        let put: { status: number; text: string } = { status: 0, text: 'not tried: the nodes did not resume' };
        if (afterKill.every((t) => t !== undefined)) {
          put = await request(terns[0]!, 'PUT', '/admin/v1/prices', {
            key: terns[0]!.adminKey,
            body: { items: [{ channelType: 'SMS', country: 'FR', amount: newPrice }] },
          }).catch((err: Error) => ({ status: 0, text: String(err.cause ?? err) }));
          const priceSetAt = performance.now();
          if (put.status === 200) {
            priceSeen = await eventually(
              async () => ((await quote(terns[1]!)) === newPrice ? performance.now() - priceSetAt : undefined),
              15_000,
              'the new price on the other node',
            ).catch(() => undefined);
          }
          await sleep(Math.max(0, Math.max(...(afterKill as number[])) + AFTER_RESUME_MS - performance.now()));
        }
        await load.stop();
        const outcomes = load.outcomes;

        // Every 201 in the last primary itself (not through HAProxy), each reaching a final status.
        const accepted = outcomes.filter((o) => o.status === 201).map((o) => o.messageId!);
        const direct = new pg.Client({ connectionString: promoted.directUrl });
        await direct.connect();
        let stored = new Map<string, string>();
        let unanswered201 = 0;
        let lastDeliveredMs = Number.NaN;
        let delayed = 0;
        try {
          const final = await eventually(
            async () => {
              const r = await direct.query<{ id: string; status: string; accepted_at: string; status_at: string }>(
                'select id, status, accepted_at, status_at from messages',
              );
              stored = new Map(r.rows.map((row) => [row.id, row.status]));
              if (!accepted.every((id) => stored.get(id) === 'DELIVERED')) return undefined;
              const answered = new Set(accepted);
              const mine = r.rows.filter((row) => answered.has(row.id));
              lastDeliveredMs = Math.max(...mine.map((row) => Number(row.status_at))) - killedWall;
              // Delivered normally in tens of milliseconds: what took seconds waited for the failover, or for a lease.
              delayed = mine.filter((row) => Number(row.status_at) - Number(row.accepted_at) > 2_000).length;
              return true;
            },
            allExited() ? 1_000 : FINAL_BOUND_MS,
            'every accepted message DELIVERED in the new primary',
          ).catch(() => false);
          const answered = new Set(accepted);
          unanswered201 = [...stored.keys()].filter((id) => !answered.has(id)).length;
          if (!final) {
            const open = accepted.filter((id) => stored.get(id) !== 'DELIVERED');
            const rows = await direct.query(
              `select m.id, m.status, m.status_detail, m.connector, m.upstream_id, m.attempts, m.accepted_at, m.status_at,
                 q.claimed_by, q.lease_until, q.attempts as queue_attempts, q.due_at, q.waiting, q.waiting_on
               from messages m left join dispatch_queue q on q.message_id = m.id where m.id = any($1)`,
              [open],
            );
            process.stdout.write(
              `# ${open.length} accepted messages not DELIVERED within ${FINAL_BOUND_MS / 1_000} s:\n${rows.rows.map((r) => `#   ${JSON.stringify(r)}`).join('\n')}\n`,
            );
          }
        } finally {
          await direct.end();
        }

        const fmt = (ms: number | undefined) => (ms === undefined || Number.isNaN(ms) ? 'never' : `${(ms / 1_000).toFixed(1)} s`);
        /** What clients saw from `from` to `to`: the 503s and the other answers, the slowest answer, each node's resume. */
        const window = (from: number, to: number, resumedAt: (number | undefined)[]) => {
          const sent = outcomes.filter((o) => o.sentAt >= from && o.sentAt < to);
          const unavailable = sent.filter((o) => o.status === 503);
          const others = sent.filter((o) => o.status !== 201 && o.status !== 503);
          return (
            `${sent.length} sends, ${unavailable.length} × 503 (Retry-After: ${tally(unavailable.map((o) => String(o.retryAfter))) || '-'})` +
            `${others.length > 0 ? `, ${others.length} other (${tally(others.map((o) => o.error ?? String(o.status)))})` : ''}; ` +
            `slowest answer ${Math.max(0, ...sent.map((o) => o.answeredAt - o.sentAt)).toFixed(0)} ms; ` +
            `node 0 sending again after ${fmt(resumedAt[0] === undefined ? undefined : resumedAt[0] - from)}, node 1 after ${fmt(resumedAt[1] === undefined ? undefined : resumedAt[1] - from)}`
          );
        };
        const failures = outcomes.filter((o) => o.status !== 201 && o.status !== 503);
        const unavailable = outcomes.filter((o) => o.status === 503);
        process.stdout.write(
          `# Patroni cluster ready in ${fmt(clusterReadyMs)}, two Tern nodes on it in ${fmt(ternsReadyMs)}; every 201 checked after ${fmt(performance.now() - startedAt)}\n` +
            `# switchover ${first.name} → ${second.name}: writable through HAProxy after ${fmt(switchoverMs)}; ${window(switchedAt, killedAt, afterSwitchover)}\n` +
            `# ${old.name} killed (kill -9), ${promoted.name} promoted: writable through HAProxy after ${fmt(failoverMs)}; ${window(killedAt, Number.POSITIVE_INFINITY, afterKill)}\n` +
            `# in all ${outcomes.length} sends (${before} accepted before the switchover): ${accepted.length} × 201, ${unavailable.length} × 503, ${failures.length} other; ` +
            `every 201 DELIVERED ${fmt(lastDeliveredMs)} after the kill (${delayed} of them more than 2 s after their 201); ` +
            `${unanswered201} stored though not answered 201 (their commit's answer lost with the primary); ` +
            `a price set once sends resumed seen by the other node in ${priceSeen === undefined ? 'never' : `${priceSeen.toFixed(0)} ms`}\n`,
        );
        for (const o of failures.slice(0, 5)) process.stdout.write(`#   node ${o.node}: ${o.error ?? `${o.status} ${o.body}`}\n`);

        assert.deepEqual(exits, [], 'no node exited');
        assert.ok(
          terns.every((t) => t.child.exitCode === null && t.child.signalCode === null),
          'both nodes still running',
        );
        assert.ok(before > 0, 'sends were accepted before the switchover');
        assert.equal(failures.length, 0, `every request answered 201 or 503: ${tally(failures.map((o) => o.error ?? `${o.status} ${o.body}`))}`);
        for (const o of unavailable) assert.ok(o.retryAfter, `a 503 says when to retry: ${o.body}`);
        assert.ok(failoverMs <= FAILOVER_BOUND_MS, `the new primary reachable within ${FAILOVER_BOUND_MS} ms: ${failoverMs} ms`);
        for (const [what, from, reachableMs, at] of [
          ['the switchover', switchedAt, switchoverMs, afterSwitchover],
          ['the kill', killedAt, failoverMs, afterKill],
        ] as const) {
          for (const [i, t] of at.entries()) {
            assert.ok(t !== undefined, `node ${i} accepted sends again after ${what}`);
            assert.ok(
              t - from <= reachableMs + RESUME_SLACK_MS,
              `node ${i} sending again ${fmt(t - from)} after ${what}; the new primary was writable after ${fmt(reachableMs)}`,
            );
          }
        }
        assert.deepEqual(
          accepted.filter((id) => !stored.has(id)),
          [],
          'every 201 in the new primary',
        );
        assert.deepEqual(
          accepted.filter((id) => stored.get(id) !== 'DELIVERED'),
          [],
          'every 201 DELIVERED',
        );
        assert.equal(put.status, 200, `price set after the failover: ${put.text}`);
        assert.ok(
          priceSeen !== undefined && priceSeen < PROPAGATION_BOUND_MS,
          `a change made once sends resume reaches the other node within ${PROPAGATION_BOUND_MS} ms`,
        );
      } catch (err) {
        if (cluster) process.stdout.write(`# cluster logs:\n${cluster.logs(20).replace(/^/gm, '#   ')}\n`);
        throw err;
      } finally {
        await Promise.all(terns.map((t) => t.kill()));
        await cluster?.stop();
      }
    },
  );
});
