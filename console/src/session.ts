import { useEffect, useState } from 'preact/hooks';
import { get, keys, storeKey } from './api.ts';

/** Who is signed in: a channel's API key (its channel and organisation) and/or the operator key. */
export interface Session {
  channel: any | null;
  organisation: any | null;
  roles: string[];
  operator: boolean;
  ready: boolean;
}

let current: Session = { channel: null, organisation: null, roles: [], operator: false, ready: false };
const listeners = new Set<(s: Session) => void>();

function set(next: Session): void {
  current = next;
  for (const l of listeners) l(current);
}

export function useSession(): Session {
  const [s, setS] = useState(current);
  useEffect(() => {
    listeners.add(setS);
    return () => void listeners.delete(setS);
  }, []);
  return s;
}

export function session(): Session {
  return current;
}

/** Reads what the stored keys reach; a key that no longer works is dropped. */
export async function load(): Promise<void> {
  const k = keys();
  let channel = null;
  let organisation = null;
  let roles: string[] = [];
  let operator = false;
  if (k.apiKey) {
    try {
      channel = (await get('/commons/v1/channels')).items[0] ?? null;
      roles = await rolesOf(channel);
      organisation = await get(`/commons/v1/organisations/${channel.organisationId}`).catch(() => null);
    } catch {
      storeKey('api', null);
      channel = null;
    }
  }
  if (k.adminKey) {
    try {
      await get('/admin/v1/organisations?pageSize=1', { admin: true });
      operator = true;
    } catch {
      storeKey('admin', null);
    }
  }
  set({ channel, organisation, roles, operator, ready: true });
}

// What the key may do shows in what the API lets it read; the console only hides what would be refused anyway.
async function rolesOf(channel: any): Promise<string[]> {
  try {
    await get(`/commons/v1/channels/${channel.channelId}/credentials`);
    return ['ADMIN'];
  } catch {
    try {
      await get(`/commons/v1/organisations/${channel.organisationId}`);
      return ['MANAGER'];
    } catch {
      return ['USER'];
    }
  }
}

/** Tries a key: a channel's API key or the operator key. Returns which it was, or throws the API's error. */
export async function signIn(key: string): Promise<'api' | 'admin'> {
  try {
    await get('/commons/v1/channels', { key });
    storeKey('api', key);
    await load();
    return 'api';
  } catch (err) {
    try {
      await get('/admin/v1/organisations?pageSize=1', { key });
    } catch {
      throw err;
    }
    storeKey('admin', key);
    await load();
    return 'admin';
  }
}

export function signOut(): void {
  storeKey('api', null);
  storeKey('admin', null);
  set({ channel: null, organisation: null, roles: [], operator: false, ready: true });
}
