export const CHANNEL_TYPES = ['SMS', 'RCS', 'VOICE'] as const;
export type ChannelType = (typeof CHANNEL_TYPES)[number];

export const CHANNEL_FLOWS = ['TRANSACTIONAL', 'MARKETING', 'OTP'] as const;
export type ChannelFlow = (typeof CHANNEL_FLOWS)[number];

export const ROLES = ['ADMIN', 'MANAGER', 'USER', 'MESSAGE'] as const;
export type Role = (typeof ROLES)[number];

/**
 * What a credential may do. MESSAGE keys only send and read messages; USER keys also read their channel, its
 * consumption and deliveries and manage the blacklist; MANAGER keys see every channel of their organisation; ADMIN
 * keys also act on sub-organisations (transfers, creation) and on channel settings and webhook secrets. Every role
 * may look numbers up.
 */
export type Permission =
  | 'messages:send'
  | 'messages:read'
  | 'channel:read'
  | 'channel:write'
  | 'organisation:read'
  | 'organisation:admin'
  | 'consumption:read'
  | 'webhooks:read'
  | 'webhooks:write'
  | 'blacklist:write'
  | 'numbers:lookup';

const GRANTS: Record<Role, readonly Permission[]> = {
  MESSAGE: ['messages:send', 'messages:read', 'numbers:lookup'],
  USER: [
    'messages:send',
    'messages:read',
    'channel:read',
    'consumption:read',
    'webhooks:read',
    'blacklist:write',
    'numbers:lookup',
  ],
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
  ADMIN: [
    'messages:send',
    'messages:read',
    'channel:read',
    'channel:write',
    'organisation:read',
    'organisation:admin',
    'consumption:read',
    'webhooks:read',
    'webhooks:write',
    'blacklist:write',
    'numbers:lookup',
  ],
};

export function rolesAllow(roles: readonly Role[], permission: Permission): boolean {
  return roles.some((r) => GRANTS[r].includes(permission));
}

/** Whether the roles see the whole organisation (MANAGER, ADMIN) or only their own channel. */
export function seesOrganisation(roles: readonly Role[]): boolean {
  return roles.includes('ADMIN') || roles.includes('MANAGER');
}
