import { useEffect, useState } from 'preact/hooks';
import { ApiError, get, keys, post, setCsrfToken, storeKey } from './api.ts';

/**
 * Who is signed in: a person (email and password or single sign-on, with a session cookie), and/or a channel's API
 * key (its channel and organisation), and/or the operator key.
 */
export interface Session {
  user: any | null;
  channel: any | null;
  organisation: any | null;
  roles: string[];
  operator: boolean;
  ready: boolean;
}

let current: Session = { user: null, channel: null, organisation: null, roles: [], operator: false, ready: false };
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

/** The roles a person's role stands for in the pages' checks: an OWNER may do what an ADMIN may. */
function personRoles(role: string): string[] {
  return role === 'OWNER' ? ['OWNER', 'ADMIN'] : [role];
}

/** Reads what the session cookie and the stored keys reach; a key that no longer works is dropped. */
export async function load(): Promise<void> {
  const k = keys();
  let user = null;
  let channel = null;
  let organisation = null;
  let roles: string[] = [];
  let operator = false;
  if (!k.apiKey) {
    try {
      const me = await get('/commons/v1/me');
      user = me.user;
      setCsrfToken(me.csrfToken);
      roles = personRoles(user.role);
      if (user.organisationId === 'operator') operator = user.role === 'OWNER' || user.role === 'ADMIN';
      else {
        channel = (await get('/commons/v1/channels').catch(() => ({ items: [] }))).items[0] ?? null;
        organisation = await get(`/commons/v1/organisations/${user.organisationId}`).catch(() => null);
      }
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 401)) throw err;
      setCsrfToken(null);
    }
  } else {
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
  set({ user, channel, organisation, roles, operator, ready: true });
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

/** Email and password: the server sets the session cookie; its CSRF token comes back in the answer. */
export async function signInWithPassword(email: string, password: string): Promise<void> {
  const res = await post('/commons/v1/sign-in', { email, password });
  setCsrfToken(res.csrfToken);
  await load();
}

/** A one-time link: an invitation accepted, or a new password set; either signs the person in. */
export async function redeemLink(kind: 'invitation' | 'reset', token: string, password: string, name?: string): Promise<void> {
  const res =
    kind === 'invitation'
      ? await post('/commons/v1/invitations/accept', { token, password, ...(name && { name }) })
      : await post('/commons/v1/password-reset', { token, password });
  storeKey('api', null);
  setCsrfToken(res.csrfToken);
  await load();
}

export async function signOut(): Promise<void> {
  if (current.user) await post('/commons/v1/sign-out').catch(() => undefined);
  setCsrfToken(null);
  storeKey('api', null);
  storeKey('admin', null);
  set({ user: null, channel: null, organisation: null, roles: [], operator: false, ready: true });
}
