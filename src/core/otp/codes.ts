import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { codeFromBytes, normaliseCode } from '../../domain/otp.ts';

/**
 * Codes of one-time passwords under a key derived from the server's secret key (TERN_SECRET_KEY, or the key file
 * beside a SQLite database). A code is never stored: it is derived from a random salt with the key (so it can be sent
 * again, or read out by a call, without being kept), and checked against an HMAC of it, compared in constant time.
 * Without the key neither the salt nor the HMAC gives the code away.
 */
export class OtpCodes {
  private readonly key: Buffer | null;

  constructor(secretKey: string | null) {
    this.key = secretKey === null ? null : createHmac('sha256', secretKey).update('tern one-time passwords v1').digest();
  }

  get available(): boolean {
    return this.key !== null;
  }

  private mac(...parts: string[]): Buffer {
    if (!this.key) throw new Error('one-time passwords need TERN_SECRET_KEY');
    return createHmac('sha256', this.key).update(parts.join('\0'), 'utf8').digest();
  }

  /** A fresh salt for a new code. */
  newSalt(): string {
    return randomBytes(16).toString('base64url');
  }

  /** The code a salt stands for: `length` characters of `alphabet`, drawn without bias from an HMAC stream. */
  code(salt: string, length: number, alphabet: string): string {
    let block = 0;
    let bytes = this.mac('code', salt, String(block));
    let i = 0;
    return codeFromBytes(
      () => {
        if (i === bytes.length) {
          block += 1;
          bytes = this.mac('code', salt, String(block));
          i = 0;
        }
        return bytes[i++]!;
      },
      length,
      alphabet,
    );
  }

  /** What is stored to check a code: an HMAC of it, bound to its one-time password. */
  hash(otpId: string, code: string): string {
    return this.mac('check', otpId, normaliseCode(code)).toString('base64url');
  }

  /** Whether a typed code is the one `storedHash` was made of; the comparison takes the same time either way. */
  matches(otpId: string, typed: string, storedHash: string): boolean {
    const given = this.mac('check', otpId, normaliseCode(typed));
    const stored = Buffer.from(storedHash, 'base64url');
    return stored.length === given.length && timingSafeEqual(given, stored);
  }
}
