import type { ChannelType } from '../../domain/tenancy.ts';
import type { Store } from '../../store/db.ts';
import { getSetting, putSetting, putSettingIfAbsent } from '../../store/settings.ts';
import { generateApiKey, hashApiKey } from './keys.ts';
import type { TenancyService } from './service.ts';

export interface AdminKeyResult {
  hash: string;
  /** The key, when it was generated on this start (it is shown once and only its hash is kept). */
  generated: string | null;
}

/**
 * The operator key: TERN_ADMIN_KEY when set, else the one generated on the first start (only its hash is kept,
 * so it is printed once). Concurrent first starts agree on one key.
 */
export async function ensureAdminKey(store: Store, configured: string | null): Promise<AdminKeyResult> {
  if (configured !== null) return { hash: hashApiKey(configured), generated: null };
  const existing = await getSetting(store.db, 'admin_key_hash');
  if (existing !== null) return { hash: existing, generated: null };
  const key = generateApiKey('tern_admin');
  const stored = await putSettingIfAbsent(store.db, 'admin_key_hash', hashApiKey(key));
  return stored === hashApiKey(key) ? { hash: stored, generated: key } : { hash: stored, generated: null };
}

export interface DemoChannel {
  type: ChannelType;
  channelId: string;
  name: string;
  /** The channel's ADMIN key when it was created on this start (shown once). */
  apiKey: string | null;
}

export interface DemoResult {
  organisationId: string;
  /** SMS, RCS and VOICE, in that order. */
  channels: DemoChannel[];
  defaultCountry: string | null;
  timeZone: string;
}

/** What the demo setting holds; `channelId` alone (the SMS channel) is what versions before RCS and voice kept. */
interface DemoSetting {
  organisationId: string;
  channelId?: string;
  channels?: Partial<Record<ChannelType, string>>;
}

const DEMO_SETTING = 'demo';
const DEMO_BALANCE_MICROS = 10_000_000;
const DEMO_COUNTRY = 'FR';

/** The demo SMS channel's number: the simulator's inbound SMS sent to it reach the channel. */
export const DEMO_SMS_NUMBER = '36111';

const DEMO_CHANNELS: ReadonlyArray<{ type: ChannelType; name: string; sender: string | null; numbers?: string[] }> = [
  { type: 'SMS', name: 'Demo SMS', sender: 'Tern', numbers: ['Tern', DEMO_SMS_NUMBER] },
  { type: 'RCS', name: 'Demo RCS', sender: 'Tern' },
  { type: 'VOICE', name: 'Demo voice', sender: null },
];

/**
 * The demo organisation (10 € of credit, national numbers read as French) with an SMS, an RCS and a VOICE channel,
 * each with an ADMIN key. Created once; later starts reuse them and add what an older version did not create (its
 * new keys are shown then).
 */
export async function ensureDemo(store: Store, tenancy: TenancyService): Promise<DemoResult> {
  const saved = await getSetting(store.db, DEMO_SETTING);
  const previous = saved === null ? null : (JSON.parse(saved) as DemoSetting);
  let org = previous ? await tenancy.findOrganisation(previous.organisationId) : null;
  const known: Partial<Record<ChannelType, string>> = org ? { ...(previous!.channelId ? { SMS: previous!.channelId } : {}), ...previous!.channels } : {};
  if (!org) {
    org = await tenancy.createOrganisation({ name: 'Demo organisation', defaultCountry: DEMO_COUNTRY });
    await tenancy.credit(org.id, DEMO_BALANCE_MICROS, 'demo');
  } else if (!previous!.channels && org.defaultCountry === null) {
    // A demo from before organisations had a country: it gets the one a new demo has, once.
    org = await tenancy.updateOrganisation(org.id, { defaultCountry: DEMO_COUNTRY });
  }
  const channels: DemoChannel[] = [];
  for (const spec of DEMO_CHANNELS) {
    const id = known[spec.type];
    const existing = id ? await tenancy.readChannel(store.db, id) : null;
    if (existing) {
      // A demo SMS channel from before it had a number gets it, once (a list someone set is left as it is).
      if (spec.numbers && existing.fromFieldList.length === 0) await tenancy.updateChannel(existing.id, { fromFieldList: spec.numbers });
      channels.push({ type: spec.type, channelId: existing.id, name: existing.name, apiKey: null });
      continue;
    }
    const sms = channels.find((c) => c.type === 'SMS');
    const channel = await tenancy.createChannel(org.id, {
      name: spec.name,
      type: spec.type,
      flow: 'TRANSACTIONAL',
      defaultFromField: spec.sender,
      ...(spec.numbers ? { fromFieldList: spec.numbers } : {}),
      ...(spec.type === 'RCS' && sms ? { fallbackSmsChannelId: sms.channelId } : {}),
    });
    const { value } = await tenancy.createCredential(channel.id, { name: `${spec.name} key`, roles: ['ADMIN'] });
    channels.push({ type: spec.type, channelId: channel.id, name: channel.name, apiKey: value });
  }
  const setting: DemoSetting = { organisationId: org.id, channels: Object.fromEntries(channels.map((c) => [c.type, c.channelId])) };
  await putSetting(store.db, DEMO_SETTING, JSON.stringify(setting));
  return { organisationId: org.id, channels, defaultCountry: org.defaultCountry, timeZone: org.timeZone };
}
