// A Tern's /metrics read back: its families and samples; and promtool's checks of it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';

/** One scrape: its families by name (from `# TYPE`) and its samples. */
export interface Scrape {
  text: string;
  types: Map<string, string>;
  /** The value of the sample `name{labels}` whose labels include all of `labels` (summed when several match). */
  value(name: string, labels?: Record<string, string>): number;
  has(name: string, labels?: Record<string, string>): boolean;
}

export async function scrape(url: string): Promise<Scrape> {
  const res = await fetch(`${url}/metrics`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  const text = await res.text();
  const types = new Map<string, string>();
  const samples: Array<{ name: string; labels: Record<string, string>; value: number }> = [];
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) types.set(type[1]!, type[2]!);
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  const matching = (name: string, labels: Record<string, string> = {}) =>
    samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return {
    text,
    types,
    value: (name, labels) => matching(name, labels).reduce((sum, s) => sum + s.value, 0),
    has: (name, labels) => matching(name, labels).length > 0,
  };
}

/** `promtool check metrics` on a scrape: what it reports (nothing when clean), or null when promtool is absent. */
export function promtoolCheckMetrics(text: string): { status: number | null; output: string } | null {
  const r = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
  if (r.error && (r.error as NodeJS.ErrnoException).code === 'ENOENT') return null;
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}
