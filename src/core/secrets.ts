import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { fail } from './errors.ts';

const VERSION = 'v1';

/**
 * Secrets kept in the database (an operator's SMPP password or API key, a channel's webhook signing secret) are
 * sealed with AES-256-GCM under a key derived from `TERN_SECRET_KEY`: `v1:<iv>:<tag>:<ciphertext>`, base64url.
 * Without the setting, Tern refuses to store a new secret rather than keep it in clear.
 */
export class SecretBox {
  private readonly key: Buffer | null;

  constructor(secretKey: string | null) {
    this.key = secretKey === null ? null : createHash('sha256').update(`tern secrets ${secretKey}`, 'utf8').digest();
  }

  get available(): boolean {
    return this.key !== null;
  }

  /** Whether a stored value is sealed (older rows may hold a secret in clear). */
  static isSealed(value: string): boolean {
    return value.startsWith(`${VERSION}:`);
  }

  /** Seals a secret for storage; `field` names it in the error when no key is configured. */
  seal(plain: string, field = 'secret'): string {
    if (!this.key) {
      fail('UNAVAILABLE', 'TERN_SECRET_KEY is not set: Tern does not store secrets unencrypted; set it (32+ characters) and restart', field);
    }
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const ct = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return [VERSION, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ct.toString('base64url')].join(':');
  }

  /** Opens a sealed secret; a value stored in clear by an older version is returned as it is. */
  open(stored: string): string {
    if (!SecretBox.isSealed(stored)) return stored;
    if (!this.key) throw new Error('a stored secret is encrypted but TERN_SECRET_KEY is not set');
    const [, iv, tag, ct] = stored.split(':');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv!, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag!, 'base64url'));
    try {
      return Buffer.concat([decipher.update(Buffer.from(ct!, 'base64url')), decipher.final()]).toString('utf8');
    } catch {
      throw new Error('a stored secret cannot be decrypted with this TERN_SECRET_KEY (was the key changed?)');
    }
  }
}
