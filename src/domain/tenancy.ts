export const CHANNEL_TYPES = ['SMS', 'RCS', 'VOICE'] as const;
export type ChannelType = (typeof CHANNEL_TYPES)[number];

export const CHANNEL_FLOWS = ['TRANSACTIONAL', 'MARKETING', 'OTP'] as const;
export type ChannelFlow = (typeof CHANNEL_FLOWS)[number];

/** Roles of API keys since the first version (kept as they were). */
export const KEY_ROLES = ['ADMIN', 'MANAGER', 'USER', 'MESSAGE'] as const;
/** Roles of people (console users), usable on API keys too. ADMIN is in both lists. */
export const USER_ROLES = ['OWNER', 'ADMIN', 'DEVELOPER', 'SENDER', 'BILLING', 'VIEWER'] as const;
export const ROLES = ['OWNER', 'ADMIN', 'MANAGER', 'USER', 'MESSAGE', 'DEVELOPER', 'SENDER', 'BILLING', 'VIEWER'] as const;
export type Role = (typeof ROLES)[number];
export type UserRole = (typeof USER_ROLES)[number];

export function isUserRole(value: unknown): value is UserRole {
  return typeof value === 'string' && (USER_ROLES as readonly string[]).includes(value);
}

/**
 * What a credential or a user may do. MESSAGE keys only send and read messages; USER keys also read their channel,
 * its consumption and deliveries and manage the blacklist; MANAGER keys see every channel of their organisation; ADMIN
 * keys also act on sub-organisations (transfers, creation) and on channel settings and webhook secrets, and manage
 * the organisation's users. OWNER may do everything ADMIN may. DEVELOPER manages keys and webhooks; SENDER sends and
 * reads messages; BILLING reads the balance and consumption and moves funds; VIEWER reads without changing anything.
 * Every role but BILLING may look numbers up.
 */
export type Permission =
  | 'messages:send'
  | 'messages:read'
  | 'channel:read'
  | 'channel:write'
  | 'organisation:read'
  | 'organisation:admin'
  | 'funds:transfer'
  | 'consumption:read'
  | 'webhooks:read'
  | 'webhooks:write'
  | 'blacklist:write'
  | 'numbers:lookup'
  | 'users:admin';

const ADMIN_GRANTS: readonly Permission[] = [
  'messages:send',
  'messages:read',
  'channel:read',
  'channel:write',
  'organisation:read',
  'organisation:admin',
  'funds:transfer',
  'consumption:read',
  'webhooks:read',
  'webhooks:write',
  'blacklist:write',
  'numbers:lookup',
  'users:admin',
];

/** The one table of what each role may do: every door checks a request's permission against it (rolesAllow). */
export const GRANTS: Record<Role, readonly Permission[]> = {
  MESSAGE: ['messages:send', 'messages:read', 'numbers:lookup'],
  USER: ['messages:send', 'messages:read', 'channel:read', 'consumption:read', 'webhooks:read', 'blacklist:write', 'numbers:lookup'],
  MANAGER: [
    'messages:send',
    'messages:read',
    'channel:read',
    'organisation:read',
    'consumption:read',
    'webhooks:read',
    'webhooks:write',
    'blacklist:write',
    'numbers:lookup',
  ],
  ADMIN: ADMIN_GRANTS,
  OWNER: ADMIN_GRANTS,
  DEVELOPER: ['messages:read', 'channel:read', 'channel:write', 'webhooks:read', 'webhooks:write', 'numbers:lookup'],
  SENDER: ['messages:send', 'messages:read', 'channel:read', 'numbers:lookup'],
  BILLING: ['channel:read', 'organisation:read', 'funds:transfer', 'consumption:read'],
  VIEWER: ['messages:read', 'channel:read', 'organisation:read', 'consumption:read', 'webhooks:read'],
};

export function rolesAllow(roles: readonly Role[], permission: Permission): boolean {
  return roles.some((r) => GRANTS[r]?.includes(permission) ?? false);
}

/**
 * Whether the roles see the whole organisation or only their own channel: the people's roles (all of them but
 * SENDER, whose keys stay on their channel as MESSAGE keys do) and MANAGER.
 */
export function seesOrganisation(roles: readonly Role[]): boolean {
  return roles.some((r) => r === 'ADMIN' || r === 'MANAGER' || r === 'OWNER' || r === 'DEVELOPER' || r === 'BILLING' || r === 'VIEWER');
}
