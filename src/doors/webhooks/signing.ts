import { Webhook } from 'standardwebhooks';

import { WEBHOOK_SECRET_PREFIX as SECRET_PREFIX } from '../../core/tenancy/keys.ts';

export interface WebhookSignatureHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

export interface SignWebhookInput {
  /** The channel's current secrets; two during a rotation, and the receiver accepts either. */
  secrets: readonly string[];
  /** The event id: the same for every attempt of one event, so receivers can de-duplicate. */
  id: string;
  /** The time of this attempt; receivers reject timestamps more than 5 minutes away from their clock. */
  timestamp: Date;
  body: string;
}

/**
 * Standard Webhooks headers for one attempt. Each secret gives one `v1,<base64 HMAC-SHA256>` signature; several are
 * separated by a space, which `standardwebhooks`' `Webhook.verify` splits and tries one by one.
 */
export function signWebhook({ secrets, id, timestamp, body }: SignWebhookInput): WebhookSignatureHeaders {
  if (secrets.length === 0) throw new Error('cannot sign a webhook without a secret');
  if (id === '') throw new Error('webhook id must not be empty');
  if (Number.isNaN(timestamp.getTime())) throw new Error('webhook timestamp is an invalid date');
  const signatures = secrets.map((secret, index) => signerFor(secret, index).sign(id, timestamp, body));
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
    'webhook-signature': signatures.join(' '),
  };
}

function signerFor(secret: string, index: number): Webhook {
  // The secret is never echoed into the message: errors end up in logs and attempt records.
  if (!secret.startsWith(SECRET_PREFIX)) {
    throw new Error(`webhook secret #${index + 1} does not start with ${SECRET_PREFIX}`);
  }
  let signer: Webhook;
  try {
    signer = new Webhook(secret);
  } catch {
    throw new Error(`webhook secret #${index + 1} is empty or not valid base64 after ${SECRET_PREFIX}`);
  }
  return signer;
}
