// The monitoring files shipped in deploy/: the example alert rules (valid, and each alert firing on the series it is
// written for and not on healthy ones), the Grafana dashboard (well formed, every query valid PromQL), and every
// metric either of them reads is one a running Tern exposes on /metrics.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test, type TestContext } from 'node:test';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { scrape } from '../support/metrics.ts';
import { forEachDialect, startTestServer, type TestServer } from '../support/server.ts';

// The suite runs from .test-build/test/deploy/: the repository is three levels up.
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const ALERTS = join(ROOT, 'deploy/prometheus/alerts.yml');
const DASHBOARD = join(ROOT, 'deploy/grafana/tern.json');

interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

const alertRules = (): Rule[] => (parseYaml(readFileSync(ALERTS, 'utf8')) as { groups: Array<{ rules: Rule[] }> }).groups.flatMap((g) => g.rules);

interface Panel {
  id: number;
  type: string;
  title: string;
  gridPos: { x: number; y: number; w: number; h: number };
  datasource?: { type: string; uid: string };
  targets?: Array<{ refId: string; expr: string; datasource?: { uid: string } }>;
}
const dashboard = () => JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { uid: string; title: string; schemaVersion: number; panels: Panel[]; templating: { list: Array<{ name: string }> } };

/** A dashboard query as Prometheus receives it: Grafana's variables replaced as Grafana does. */
function asPromql(expr: string): string {
  return expr.replaceAll('$__rate_interval', '1m').replaceAll('$__range', '6h').replaceAll('$__interval', '15s').replaceAll('$instance', '.*');
}

/** `promtool` with these arguments, or null when it is not installed. */
function promtool(args: string[]): { status: number | null; output: string } | null {
  const r = spawnSync('promtool', args, { encoding: 'utf8' });
  if (r.error && (r.error as NodeJS.ErrnoException).code === 'ENOENT') return null;
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

function needPromtool(t: TestContext): boolean {
  if (promtool(['--version']) !== null) return true;
  t.skip('promtool is not installed (Debian package prometheus; scripts/setup-system.sh installs it)');
  return false;
}

/** Metric names a PromQL expression reads: identifiers not called as functions, outside label matchers and ranges. */
export function metricNames(expr: string): string[] {
  const KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'and', 'or', 'unless', 'bool', 'offset', 'inf', 'nan']);
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""') // strings
    .replace(/\{[^}]*\}/g, '') // label matchers
    .replace(/\[[^\]]*\]/g, '') // ranges
    .replace(/\boffset\s+-?\w+/g, '') // offsets
    .replace(/(?<![\w:])\d[\w.+-]*/g, '') // numbers
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ''); // label lists
  const names = new Set<string>();
  for (const m of stripped.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)) {
    const after = stripped.slice(m.index! + m[0].length).trimStart();
    if (after.startsWith('(') || KEYWORDS.has(m[0].toLowerCase())) continue;
    names.add(m[0]);
  }
  return [...names];
}

describe('Prometheus alert rules (deploy/prometheus/alerts.yml)', () => {
  test('promtool check rules finds them valid', (t) => {
    if (!needPromtool(t)) return;
    const r = promtool(['check', 'rules', ALERTS])!;
    assert.equal(r.status, 0, r.output);
    assert.match(r.output, new RegExp(`SUCCESS: ${alertRules().length} rules found`));
  });

  test('name the alerts asked for, each with a severity, a summary and a description', () => {
    const rules = alertRules();
    assert.deepEqual(
      rules.map((r) => r.alert),
      ['TernNodeDown', 'TernNotReady', 'TernDatabaseErrors', 'TernQueueBacklogGrowing', 'TernWebhookFailureRate', 'TernConnectorDown', 'TernEventLoopLag'],
    );
    for (const r of rules) {
      assert.match(r.labels?.severity ?? '', /^(critical|warning)$/, r.alert);
      assert.ok(r.annotations?.summary && r.annotations.description, r.alert);
    }
  });

  test('each alert fires on the series it is written for, and not on a healthy node', (t) => {
    if (!needPromtool(t)) return;
    const dir = mkdtempSync(join(tmpdir(), 'tern-alerts-'));
    try {
      // Their annotations aside (promtool would compare every word of them): the rules as shipped otherwise.
      const rules = { groups: [{ name: 'tern', rules: alertRules().map(({ annotations: _, ...r }) => r) }] };
      writeFileSync(join(dir, 'rules.yml'), stringifyYaml(rules));
      const a = 'instance="a:8080",job="tern"';
      const b = 'instance="b:8080",job="tern"';
      const fires = (alertname: string, at: string, labels: Array<Record<string, string>>) => ({
        eval_time: at,
        alertname,
        exp_alerts: labels.map((l) => ({ exp_labels: l })),
      });
      const severity = (name: string) => alertRules().find((r) => r.alert === name)!.labels!.severity!;
      const tests = [
        {
          interval: '1m',
          input_series: [
            { series: `up{${a}}`, values: '1 1 0 0 0 0' },
            { series: `up{${b}}`, values: '1 1 1 1 1 1' },
            { series: `tern_db_up{${a}}`, values: '1 1 1 1 1 1' },
            { series: `tern_db_up{${b}}`, values: '1 0 0 0 0 0' },
          ],
          alert_rule_test: [
            fires('TernNodeDown', '2m', []),
            fires('TernNodeDown', '5m', [{ severity: severity('TernNodeDown'), instance: 'a:8080', job: 'tern' }]),
            fires('TernNotReady', '5m', [{ severity: severity('TernNotReady'), instance: 'b:8080', job: 'tern' }]),
          ],
        },
        {
          interval: '1m',
          input_series: [
            // a: 1 request in 11 fails; b: 1 in 600.
            { series: `tern_http_requests_total{${a},method="POST",route="/sms/v1/messages",status="201"}`, values: '0+600x30' },
            { series: `tern_http_requests_total{${a},method="POST",route="/sms/v1/messages",status="503"}`, values: '0+60x30' },
            { series: `tern_http_requests_total{${b},method="POST",route="/sms/v1/messages",status="201"}`, values: '0+600x30' },
            { series: `tern_http_requests_total{${b},method="POST",route="/sms/v1/messages",status="500"}`, values: '0+1x30' },
          ],
          alert_rule_test: [fires('TernDatabaseErrors', '20m', [{ severity: severity('TernDatabaseErrors'), instance: 'a:8080' }])],
        },
        {
          interval: '1m',
          input_series: [
            // The dispatch queue grows and its oldest due row ages; the webhooks queue drains as fast as it fills.
            { series: `tern_queue_depth{${a},queue="dispatch"}`, values: '0+10x40' },
            { series: `tern_queue_oldest_due_seconds{${a},queue="dispatch"}`, values: '0+60x40' },
            { series: `tern_queue_depth{${b},queue="dispatch"}`, values: '0+10x40' },
            { series: `tern_queue_oldest_due_seconds{${b},queue="dispatch"}`, values: '0+60x40' },
            { series: `tern_queue_depth{${a},queue="webhooks"}`, values: '5x40' },
            { series: `tern_queue_oldest_due_seconds{${a},queue="webhooks"}`, values: '1x40' },
          ],
          alert_rule_test: [
            fires('TernQueueBacklogGrowing', '10m', []),
            fires('TernQueueBacklogGrowing', '30m', [{ severity: severity('TernQueueBacklogGrowing'), queue: 'dispatch' }]),
          ],
        },
        {
          interval: '1m',
          input_series: [
            { series: `tern_webhook_deliveries_total{${a},outcome="delivered"}`, values: '0+30x40' },
            { series: `tern_webhook_deliveries_total{${a},outcome="retry"}`, values: '0+30x40' },
            { series: `tern_webhook_deliveries_total{${b},outcome="delivered"}`, values: '0+30x40' },
          ],
          alert_rule_test: [fires('TernWebhookFailureRate', '30m', [{ severity: severity('TernWebhookFailureRate') }])],
        },
        {
          interval: '1m',
          input_series: [
            // "smsc" is down on both nodes; "backup" is down on one and up on the other.
            { series: `tern_connector_up{${a},connector="smsc",state="DOWN"}`, values: '1x20' },
            { series: `tern_connector_up{${b},connector="smsc",state="DOWN"}`, values: '1x20' },
            { series: `tern_connector_up{${a},connector="backup",state="DOWN"}`, values: '1x20' },
            { series: `tern_connector_up{${b},connector="backup",state="UP"}`, values: '1x20' },
          ],
          alert_rule_test: [
            fires('TernConnectorDown', '3m', []),
            fires('TernConnectorDown', '10m', [{ severity: severity('TernConnectorDown'), connector: 'smsc' }]),
          ],
        },
        {
          interval: '1m',
          input_series: [
            { series: `nodejs_eventloop_lag_p99_seconds{${a}}`, values: '0.5x20' },
            { series: `nodejs_eventloop_lag_p99_seconds{${b}}`, values: '0.02x20' },
          ],
          alert_rule_test: [fires('TernEventLoopLag', '10m', [{ severity: severity('TernEventLoopLag'), instance: 'a:8080', job: 'tern' }])],
        },
      ];
      writeFileSync(join(dir, 'tests.yml'), stringifyYaml({ rule_files: ['rules.yml'], evaluation_interval: '1m', tests }));
      const r = promtool(['test', 'rules', join(dir, 'tests.yml')])!;
      assert.equal(r.status, 0, r.output);
      assert.match(r.output, /SUCCESS/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('Grafana dashboard (deploy/grafana/tern.json)', () => {
  test('is a dashboard of panels that do not overlap, each reading Prometheus through the data source variable', () => {
    const d = dashboard();
    assert.equal(d.uid, 'tern-overview');
    assert.ok(d.schemaVersion >= 36);
    assert.deepEqual(d.templating.list.map((v) => v.name), ['datasource', 'instance']);
    const ids = new Set<number>();
    const cells = new Set<string>();
    for (const p of d.panels) {
      assert.ok(!ids.has(p.id), `panel id ${p.id} is unique`);
      ids.add(p.id);
      assert.ok(p.title, `panel ${p.id} has a title`);
      const { x, y, w, h } = p.gridPos;
      assert.ok(x >= 0 && w > 0 && x + w <= 24 && h > 0, `${p.title}: within the 24 columns`);
      for (let i = x; i < x + w; i++) {
        for (let j = y; j < y + h; j++) {
          assert.ok(!cells.has(`${i},${j}`), `${p.title} overlaps another panel at ${i},${j}`);
          cells.add(`${i},${j}`);
        }
      }
      if (p.type === 'row') continue;
      assert.equal(p.datasource?.uid, '${datasource}', p.title);
      assert.ok(p.targets && p.targets.length > 0, `${p.title} has queries`);
      assert.equal(new Set(p.targets.map((q) => q.refId)).size, p.targets.length, `${p.title}: refIds are unique`);
    }
    const titles = d.panels.map((p) => p.title).join(' | ');
    for (const topic of [/Sends \/ s/, /Final statuses/, /latency/i, /Webhook/, /Queue depth/, /Connector state/, /Connector submits/, /CPU/, /Memory/, /Event loop lag/]) assert.match(titles, topic);
  });

  test('every query is valid PromQL (promtool check rules, the queries as recording rules)', (t) => {
    if (!needPromtool(t)) return;
    const dir = mkdtempSync(join(tmpdir(), 'tern-dashboard-'));
    try {
      const queries = dashboard().panels.flatMap((p) => (p.targets ?? []).map((q, i) => ({ record: `dashboard:panel_${p.id}_${i}`, expr: asPromql(q.expr) })));
      writeFileSync(join(dir, 'queries.yml'), stringifyYaml({ groups: [{ name: 'dashboard', rules: queries }] }));
      const r = promtool(['check', 'rules', join(dir, 'queries.yml')])!;
      assert.equal(r.status, 0, r.output);
      assert.match(r.output, new RegExp(`SUCCESS: ${queries.length} rules found`));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

test('metricNames finds the metrics of an expression, not its functions, labels or ranges', () => {
  assert.deepEqual(
    metricNames('sum by (le, route) (rate(tern_http_request_duration_seconds_bucket{instance=~"$instance", route!="x y"}[5m])) / on (instance) group_left up and tern_db_up == 0'),
    ['tern_http_request_duration_seconds_bucket', 'up', 'tern_db_up'],
  );
  assert.deepEqual(metricNames('histogram_quantile(0.99, sum without (instance) (rate(x_total[1m] offset 5m)))'), ['x_total']);
});

forEachDialect('The dashboard and the alerts read what Tern exposes', (dialect) => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer(dialect);
  });
  after(async () => {
    await server?.stop();
  });

  test('every metric the dashboard and the alert rules read is on /metrics', async () => {
    const exposed = (await scrape(server.url)).types;
    // Prometheus's own series of a scrape target.
    const fromPrometheus = new Set(['up']);
    const familyOf = (name: string) => (exposed.has(name) ? name : name.replace(/_(bucket|sum|count)$/, ''));
    const read = new Map<string, string>();
    for (const r of alertRules()) for (const n of metricNames(r.expr)) read.set(n, `alert ${r.alert}`);
    for (const p of dashboard().panels) for (const q of p.targets ?? []) for (const n of metricNames(asPromql(q.expr))) read.set(n, `panel "${p.title}"`);
    assert.ok(read.size > 20, `the files read ${read.size} metrics`);
    for (const [name, where] of read) {
      if (fromPrometheus.has(name)) continue;
      const family = familyOf(name);
      assert.ok(exposed.has(family), `${where} reads ${name}, which /metrics does not expose`);
      if (family !== name) assert.equal(exposed.get(family), 'histogram', `${where}: ${name} is a histogram's`);
    }
  });
});
