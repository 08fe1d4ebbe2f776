import type { AdminKeyResult, DemoChannel, DemoResult } from './core/tenancy/bootstrap.ts';

/** One thing `tern serve` tells the operator at start: a message with its fields (JSON) and its lines (terminal). */
export interface Announcement {
  msg: string;
  fields: Record<string, unknown>;
  lines: string[];
}

export interface StartupFacts {
  /** The HTTP API's base URL. */
  base: string;
  adminKey: AdminKeyResult;
  /** TERN_ADMIN_KEY is set (the operator key is the operator's own). */
  adminKeyConfigured: boolean;
  demo: DemoResult | null;
}

const EXAMPLES: Readonly<Record<DemoChannel['type'], { path: string; body: string }>> = {
  SMS: { path: '/sms/v1/messages', body: '{"recipient":{"to":"0612345678"},"body":{"text":"Hello from Tern"}}' },
  RCS: {
    path: '/rcs/v1/messages',
    body: '{"recipient":{"to":"33612345678"},"body":{"type":"TEXT","text":"Hello from Tern"},"fallback":{"text":"Hello from Tern, by SMS"}}',
  },
  VOICE: { path: '/voice/v1/messages', body: '{"recipient":{"to":"33612345678"},"body":{"text":"Hello from Tern","language":"en-GB"}}' },
};

const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

function sendExample(base: string, channel: DemoChannel, key: string): string[] {
  const e = EXAMPLES[channel.type];
  return [
    `curl -s -H ${shellQuote(`X-Api-Key: ${key}`)} -H 'Content-Type: application/json' \\`,
    `     -d ${shellQuote(e.body)} ${base}${e.path}`,
  ];
}

/** The operator key as the re-issue example can show it. */
function operatorKey(facts: StartupFacts): string {
  if (facts.adminKey.generated) return facts.adminKey.generated;
  return facts.adminKeyConfigured ? '$TERN_ADMIN_KEY' : '<operator key>';
}

function reissueExample(facts: StartupFacts, channelId: string): string[] {
  return [
    `curl -s -H ${shellQuote(`X-Api-Key: ${operatorKey(facts)}`)} -H 'Content-Type: application/json' \\`,
    `     -d '{"name":"Demo key","roles":["ADMIN"]}' ${facts.base}/admin/v1/channels/${channelId}/credentials`,
  ];
}

/**
 * What `tern serve` prints once it listens, whatever the log level: the operator key and the demo's keys when they
 * were made on this start (shown once, with a request to paste for each channel), and how to get a new key.
 */
export function startupAnnouncements(facts: StartupFacts): Announcement[] {
  const out: Announcement[] = [];
  const { base, demo } = facts;
  if (facts.adminKey.generated) {
    out.push({
      msg: 'operator key created, shown once: keep it (TERN_ADMIN_KEY)',
      fields: { operatorKey: facts.adminKey.generated },
      lines: ['', `Operator key (for /admin/v1), shown once, keep it: ${facts.adminKey.generated}`],
    });
  }
  if (!demo) return out;
  const where = demo.defaultCountry
    ? `national numbers are read in ${demo.defaultCountry}, dates without an offset in ${demo.timeZone}`
    : `dates without an offset are read in ${demo.timeZone}`;
  out.push({
    msg: 'demo organisation',
    fields: { organisationId: demo.organisationId, defaultCountry: demo.defaultCountry, timeZone: demo.timeZone },
    lines: ['', `Demo organisation ${demo.organisationId} (${where}):`],
  });
  for (const channel of demo.channels) {
    if (channel.apiKey) {
      const example = sendExample(base, channel, channel.apiKey);
      out.push({
        msg: `demo ${channel.type} channel, its key shown once`,
        fields: { type: channel.type, channelId: channel.channelId, apiKey: channel.apiKey, example: example.join('\n') },
        lines: [`  ${channel.type} channel ${channel.channelId}, key (shown once, keep it): ${channel.apiKey}`, ...example.map((l) => `    ${l}`)],
      });
    } else {
      out.push({
        msg: `demo ${channel.type} channel (its key was shown when it was created)`,
        fields: { type: channel.type, channelId: channel.channelId },
        lines: [`  ${channel.type} channel ${channel.channelId} (its key was shown when it was created)`],
      });
    }
  }
  const first = demo.channels[0]!;
  const reissue = reissueExample(facts, first.channelId);
  const operatorHint = facts.adminKeyConfigured || facts.adminKey.generated
    ? []
    : ['  Lost the operator key too? Start Tern with TERN_ADMIN_KEY set to a new one (16 characters or more): it replaces the generated key.'];
  out.push({
    msg: "a lost key is replaced by a new one: POST /admin/v1/channels/{channelId}/credentials with the operator key",
    fields: { example: reissue.join('\n') },
    lines: ['', `Lost a key? Get a new one for its channel (here ${first.type}; earlier keys keep working until revoked):`, ...reissue.map((l) => `  ${l}`), ...operatorHint, ''],
  });
  return out;
}
