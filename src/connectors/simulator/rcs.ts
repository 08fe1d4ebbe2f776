/** What an RCS-capable handset of the simulated network supports (RBM feature names). */
export const SIMULATED_RCS_FEATURES = [
  'RICHCARD_STANDALONE',
  'RICHCARD_CAROUSEL',
  'ACTION_CREATE_CALENDAR_EVENT',
  'ACTION_DIAL',
  'ACTION_OPEN_URL',
  'ACTION_SHARE_LOCATION',
  'ACTION_VIEW_LOCATION',
] as const;

/** Numbers ending in 9 are not RCS-capable in the simulated network. */
export function simulatedRcsCapable(msisdn: string): boolean {
  return !msisdn.endsWith('9');
}

/** Numbers ending in 0007 never get an RCS message delivered (the handset stays offline for RCS; SMS still works). */
export function simulatedRcsOffline(msisdn: string): boolean {
  return msisdn.endsWith('0007');
}

/** Numbers ending in 0008 receive RCS messages but never read them on their own (READ only by injection). */
export function simulatedNeverReads(msisdn: string): boolean {
  return msisdn.endsWith('0008');
}

export const DEFAULT_READ_DELAY_MS = 1_000;
