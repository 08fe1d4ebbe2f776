import type { Channel } from '../../store/channels.ts';

/** What seals and opens secrets kept in the database (the SecretBox of TERN_SECRET_KEY). */
export interface SecretSealer {
  readonly available: boolean;
  seal(plain: string, field?: string): string;
  open(stored: string): string;
}

/** A channel as stored: its webhook signing secrets sealed. */
export function sealChannel(c: Channel, box: SecretSealer): Channel {
  return {
    ...c,
    webhookSecret: box.seal(c.webhookSecret, 'webhookSecret'),
    webhookSecretPrevious: c.webhookSecretPrevious === null ? null : box.seal(c.webhookSecretPrevious, 'webhookSecret'),
  };
}

/** A channel as used: its webhook signing secrets in clear (values stored in clear by older versions read as they are). */
export function openChannel(c: Channel, box: SecretSealer): Channel {
  return {
    ...c,
    webhookSecret: box.open(c.webhookSecret),
    webhookSecretPrevious: c.webhookSecretPrevious === null ? null : box.open(c.webhookSecretPrevious),
  };
}
