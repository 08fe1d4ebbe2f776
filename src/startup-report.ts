import type { AdminKeyResult, DemoChannel, DemoResult } from './core/tenancy/bootstrap.ts';

/** One thing `tern serve` tells the operator at start: a message with its fields (JSON) and its lines (terminal). */
export interface Announcement {
  msg: string;
  /** What a JSON record of it says: never a key (a key made on this start is named `<key>` in its example). */
  fields: Record<string, unknown>;
  /** What a terminal shows, the keys made on this start included. */
  lines: string[];
  /** The lines show a key made on this start: in JSON they go to a file readable by its owner only, not to the log. */
  showsKey: boolean;
  /** The request to paste as the lines show it (keys included), when there is one. */
  example?: string;
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
  return [`curl -s -H ${shellQuote(`X-Api-Key: ${key}`)} -H 'Content-Type: application/json' \\`, `     -d ${shellQuote(e.body)} ${base}${e.path}`];
}

/** What a JSON record shows in place of a key made on this start. */
const KEY_PLACEHOLDER = '<key>';

/** The operator key as the re-issue example can show it (`withKey`: the one made on this start, if any). */
function operatorKey(facts: StartupFacts, withKey: boolean): string {
  if (facts.adminKey.generated) return withKey ? facts.adminKey.generated : '<operator key>';
  return facts.adminKeyConfigured ? '$TERN_ADMIN_KEY' : '<operator key>';
}

function reissueExample(facts: StartupFacts, channelId: string, withKey: boolean): string[] {
  return [
    `curl -s -H ${shellQuote(`X-Api-Key: ${operatorKey(facts, withKey)}`)} -H 'Content-Type: application/json' \\`,
    `     -d '{"name":"Demo key","roles":["ADMIN"]}' ${facts.base}/admin/v1/channels/${channelId}/credentials`,
  ];
}

/**
 * What `tern serve` prints once it listens, whatever the log level: the operator key and the demo's keys when they
 * were made on this start (shown once, with a request to paste for each channel), and how to get a new key. The keys
 * are in the lines only (a terminal), never in the fields (a JSON record).
 */
export function startupAnnouncements(facts: StartupFacts): Announcement[] {
  const out: Announcement[] = [];
  const { base, demo } = facts;
  if (facts.adminKey.generated) {
    out.push({
      msg: 'operator key created, shown once: keep it (TERN_ADMIN_KEY)',
      fields: {},
      lines: ['', `Operator key (for /admin/v1), shown once, keep it: ${facts.adminKey.generated}`],
      showsKey: true,
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
    showsKey: false,
  });
  for (const channel of demo.channels) {
    if (channel.apiKey) {
      const example = sendExample(base, channel, channel.apiKey);
      out.push({
        msg: `demo ${channel.type} channel, its key shown once`,
        fields: { type: channel.type, channelId: channel.channelId, example: sendExample(base, channel, KEY_PLACEHOLDER).join('\n') },
        lines: [`  ${channel.type} channel ${channel.channelId}, key (shown once, keep it): ${channel.apiKey}`, ...example.map((l) => `    ${l}`)],
        showsKey: true,
        example: example.join('\n'),
      });
    } else {
      out.push({
        msg: `demo ${channel.type} channel (its key was shown when it was created)`,
        fields: { type: channel.type, channelId: channel.channelId },
        lines: [`  ${channel.type} channel ${channel.channelId} (its key was shown when it was created)`],
        showsKey: false,
      });
    }
  }
  const first = demo.channels[0]!;
  const reissue = reissueExample(facts, first.channelId, true);
  const operatorHint =
    facts.adminKeyConfigured || facts.adminKey.generated
      ? []
      : ['  Lost the operator key too? Start Tern with TERN_ADMIN_KEY set to a new one (16 characters or more): it replaces the generated key.'];
  out.push({
    msg: 'a lost key is replaced by a new one: POST /admin/v1/channels/{channelId}/credentials with the operator key',
    fields: { example: reissueExample(facts, first.channelId, false).join('\n') },
    lines: [
      '',
      `Lost a key? Get a new one for its channel (here ${first.type}; earlier keys keep working until revoked):`,
      ...reissue.map((l) => `  ${l}`),
      ...operatorHint,
      '',
    ],
    showsKey: facts.adminKey.generated !== null,
    example: reissue.join('\n'),
  });
  return out;
}
