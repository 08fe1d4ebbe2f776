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

export interface DemoResult {
  organisationId: string;
  channelId: string;
  /** The demo API key when it was created on this start. */
  apiKey: string | null;
}

const DEMO_SETTING = 'demo';
const DEMO_BALANCE_MICROS = 10_000_000;

/** The demo organisation, SMS channel and ADMIN key, created once; later starts find and reuse them. */
export async function ensureDemo(store: Store, tenancy: TenancyService): Promise<DemoResult> {
  const existing = await getSetting(store.db, DEMO_SETTING);
  if (existing !== null) {
    const demo = JSON.parse(existing) as { organisationId: string; channelId: string };
    if (await tenancy.findOrganisation(demo.organisationId)) return { ...demo, apiKey: null };
  }
  const org = await tenancy.createOrganisation({ name: 'Demo organisation' });
  const channel = await tenancy.createChannel(org.id, {
    name: 'Demo SMS',
    type: 'SMS',
    flow: 'TRANSACTIONAL',
    defaultFromField: 'Tern',
  });
  const { value } = await tenancy.createCredential(channel.id, { name: 'Demo key', roles: ['ADMIN'] });
  await tenancy.credit(org.id, DEMO_BALANCE_MICROS, 'demo');
  await putSetting(store.db, DEMO_SETTING, JSON.stringify({ organisationId: org.id, channelId: channel.id }));
  return { organisationId: org.id, channelId: channel.id, apiKey: value };
}
