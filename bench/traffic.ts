/**
 * `npm run bench traffic` (SQLite): what a queued campaign and a flooding tenant do to others' messages.
 * - OTP latency, accept → DELIVERED (from Tern's own timestamps), for BENCH_OTP_MESSAGES (300) sent at 20 a second:
 *   alone, then while a BENCH_CAMPAIGN_RECIPIENTS (100,000) marketing campaign drains through the same network.
 *   Target: p99 under load ≤ 2 × p99 alone.
 * - Marketing sends' latency, the same way for BENCH_QUIET_MESSAGES (300) at 20 a second: alone, then while another
 *   tenant's campaign of BENCH_CAMPAIGN_RECIPIENTS waits in the same lane, scheduled for tomorrow. Target: the same.
 * - Tenant isolation: a tenant sending BENCH_QUIET_MESSAGES (300) at 20 a second, alone, then while another tenant
 *   sends over 64 connections as fast as its traffic limits allow (the defaults: 500 sends a second per key, the rest
 *   answered 429). Target: p99 ≤ 2 × alone. Then the same against a flood with no limits at all (the server's CPU
 *   spent by one tenant), for the record.
 */
import Database from 'better-sqlite3';
import { api, BENCH_ADMIN_KEY, progress, type Row, startBenchServer } from './support.ts';

const OTP = Number(process.env.BENCH_OTP_MESSAGES ?? 300);
const CAMPAIGN = Number(process.env.BENCH_CAMPAIGN_RECIPIENTS ?? 100_000);
const QUIET = Number(process.env.BENCH_QUIET_MESSAGES ?? 300);
const RATE = 20;
const CAMPAIGN_CHUNK = 10_000;

async function tenant(url: string, flow: string, balance = 100_000): Promise<{ key: string; organisationId: string }> {
  const org = await api(url, 'POST', '/admin/v1/organisations', BENCH_ADMIN_KEY, { name: `Bench ${flow}` });
  const channel = await api(url, 'POST', `/admin/v1/organisations/${org.organisationId}/channels`, BENCH_ADMIN_KEY, {
    name: `Bench ${flow}`,
    type: 'SMS',
    flow,
  });
  const cred = await api(url, 'POST', `/admin/v1/channels/${channel.channelId}/credentials`, BENCH_ADMIN_KEY, { name: 'bench', roles: ['ADMIN'] });
  await api(url, 'POST', `/admin/v1/organisations/${org.organisationId}/credit`, BENCH_ADMIN_KEY, { amount: balance });
  return { key: cred.value as string, organisationId: org.organisationId as string };
}

const number = (series: number, i: number) => `336${series}${String(i % 1_000_000).padStart(6, '0')}5`;

/** A campaign of CAMPAIGN recipients (numbers of series 7), sent in requests of CAMPAIGN_CHUNK; `fields`: the rest of each request. */
async function campaign(url: string, key: string, fields: Record<string, unknown>): Promise<void> {
  for (let i = 0; i < CAMPAIGN; i += CAMPAIGN_CHUNK) {
    const recipients = Array.from({ length: Math.min(CAMPAIGN_CHUNK, CAMPAIGN - i) }, (_, j) => ({ to: number(7, i + j) }));
    await api(url, 'POST', '/sms/v1/campaigns', key, { recipients, ...fields });
  }
}

/** Sends `count` messages at `rate` a second; answers their ids. */
async function paced(url: string, key: string, count: number, series: number): Promise<string[]> {
  const ids: string[] = [];
  const started = Date.now();
  await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      await new Promise((r) => setTimeout(r, Math.max(0, started + (i * 1000) / RATE - Date.now())));
      const res = await fetch(`${url}/sms/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify({ recipient: { to: number(series, i) }, body: { text: `Your code is ${100000 + i}` } }),
      });
      const body = (await res.json()) as { messageId?: string };
      if (res.status !== 201 || !body.messageId) throw new Error(`send answered ${res.status}`);
      ids.push(body.messageId);
    }),
  );
  return ids;
}

/** accept → DELIVERED of these messages once all are final (ms, sorted). */
async function latencies(dbPath: string, ids: string[]): Promise<number[]> {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    const select = db.prepare(`select status, accepted_at, status_at from messages where id in (${ids.map(() => '?').join(',')})`);
    for (let waited = 0; ; waited += 200) {
      const rows = select.all(...ids) as Array<{ status: string; accepted_at: number; status_at: number }>;
      if (rows.every((r) => r.status !== 'ENROUTE' && r.status !== 'SCHEDULED') || waited > 600_000) {
        return rows
          .filter((r) => r.status === 'DELIVERED')
          .map((r) => Number(r.status_at) - Number(r.accepted_at))
          .sort((a, b) => a - b);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  } finally {
    db.close();
  }
}

const pct = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? 0;

function row(name: string, alone: number[], loaded: number[], note: string): Row[] {
  const ratio = pct(loaded, 99) / Math.max(1, pct(alone, 99));
  return [
    { case: `${name}, alone`, 'req/s': RATE, 'p50 ms': pct(alone, 50), 'p99 ms': pct(alone, 99), 'RSS MB': '-', note: `${alone.length} delivered` },
    {
      case: `${name}, ${note}`,
      'req/s': RATE,
      'p50 ms': pct(loaded, 50),
      'p99 ms': pct(loaded, 99),
      'RSS MB': '-',
      note: `${loaded.length} delivered; p99 ${ratio.toFixed(2)} × alone (target ≤ 2): ${ratio <= 2 ? 'met' : 'not met'}`,
    },
  ];
}

async function otpUnderCampaign(): Promise<Row[]> {
  const server = await startBenchServer();
  try {
    const otp = await tenant(server.url, 'OTP');
    // A bench sends far more codes to one number range than the default velocity guard allows.
    await api(server.url, 'PUT', `/admin/v1/organisations/${otp.organisationId}/fraud-guards`, BENCH_ADMIN_KEY, { velocityLimits: [] });
    const marketing = await tenant(server.url, 'MARKETING', 1_000_000);
    progress(`OTP latency alone: ${OTP} at ${RATE}/s`);
    const alone = await latencies(server.dbPath, await paced(server.url, otp.key, OTP, 1));
    progress(`a ${CAMPAIGN}-recipient campaign, then OTPs while it drains`);
    await campaign(server.url, marketing.key, { body: { text: 'Our spring sale starts today' } });
    const loaded = await latencies(server.dbPath, await paced(server.url, otp.key, OTP, 2));
    if (process.env.BENCH_TRAFFIC_DETAIL) progress(`OTP under load, slowest: ${loaded.slice(-10).join(' ')} ms`);
    return row('OTP accept → DELIVERED', alone, loaded, `while a ${CAMPAIGN.toLocaleString('en-US')}-recipient campaign drains`);
  } finally {
    await server.stop();
  }
}

/**
 * A tenant's marketing sends (claimed from the queue, not handed over) alone, then while another tenant's campaign of
 * BENCH_CAMPAIGN_RECIPIENTS waits in the same lane, scheduled for tomorrow: the wait costs the claims nothing.
 */
async function marketingBesideScheduledCampaign(): Promise<Row[]> {
  const server = await startBenchServer();
  try {
    const sender = await tenant(server.url, 'MARKETING');
    const scheduler = await tenant(server.url, 'MARKETING', 1_000_000);
    progress(`marketing sends alone: ${QUIET} at ${RATE}/s`);
    const alone = await latencies(server.dbPath, await paced(server.url, sender.key, QUIET, 6));
    progress(`a ${CAMPAIGN}-recipient campaign scheduled for tomorrow, then the same sends`);
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString();
    await campaign(server.url, scheduler.key, { body: { text: 'Our spring sale starts tomorrow' }, sentDate: tomorrow });
    const loaded = await latencies(server.dbPath, await paced(server.url, sender.key, QUIET, 8));
    return row('marketing accept → DELIVERED', alone, loaded, `while a ${CAMPAIGN.toLocaleString('en-US')}-recipient campaign waits, scheduled for tomorrow`);
  } finally {
    await server.stop();
  }
}

/** `limited`: the flooding tenant under the default traffic limits; else none at all. */
async function tenantIsolation(limited: boolean): Promise<Row[]> {
  // An empty setting is the defaults (the bench's servers otherwise run without limits).
  const server = await startBenchServer(limited ? { TERN_RATE_LIMITS: '' } : {});
  try {
    const quiet = await tenant(server.url, 'TRANSACTIONAL');
    const noisy = await tenant(server.url, 'TRANSACTIONAL', 1_000_000);
    progress(`a tenant alone: ${QUIET} at ${RATE}/s`);
    const alone = await latencies(server.dbPath, await paced(server.url, quiet.key, QUIET, 3));
    progress(`the same while another tenant floods${limited ? ' within its limits' : ' with no limits'}`);
    let flooding = true;
    let sent = 0;
    let accepted = 0;
    const flood = Promise.all(
      Array.from({ length: 64 }, async (_, c) => {
        while (flooding) {
          const res = await fetch(`${server.url}/sms/v1/messages`, {
            method: 'POST',
            headers: { 'x-api-key': noisy.key, 'content-type': 'application/json' },
            body: JSON.stringify({ recipient: { to: number(4, c * 100_000 + sent++) }, body: { text: 'Flood' } }),
          });
          await res.arrayBuffer();
          if (res.status === 201) accepted++;
        }
      }),
    );
    const loaded = await latencies(server.dbPath, await paced(server.url, quiet.key, QUIET, 5));
    flooding = false;
    await flood;
    const load = `${sent.toLocaleString('en-US')} sent meanwhile, ${accepted.toLocaleString('en-US')} accepted`;
    const rows = row(
      'a tenant’s accept → DELIVERED',
      alone,
      loaded,
      limited ? `while another sends as fast as its limits allow (${load})` : `while another floods with no limits (${load}; for the record)`,
    );
    return limited
      ? rows
      : rows
          .slice(1)
          .map((r) => ({ ...r, note: String(r.note).replace(/; p99 .*/, `; p99 ${(pct(loaded, 99) / Math.max(1, pct(alone, 99))).toFixed(2)} × alone`) }));
  } finally {
    await server.stop();
  }
}

export async function runTrafficBench(): Promise<Row[]> {
  return [...(await otpUnderCampaign()), ...(await marketingBesideScheduledCampaign()), ...(await tenantIsolation(true)), ...(await tenantIsolation(false))];
}
