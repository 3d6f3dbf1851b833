import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** The shape of every key generateApiKey makes: `pos_` and 32 bytes in base64url (43 characters). */
export const API_KEY_SHAPE = /^pos_[A-Za-z0-9_-]{43}$/;

/** 32 random bytes; the prefix makes a leaked key easy to recognise in a secret scanner. */
export function generateApiKey(): string {
  return `pos_${randomBytes(32).toString('base64url')}`;
}

/** Keys carry 256 bits of entropy, so a fast hash is enough: nobody can guess their way back. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

export function generateAdminToken(): string {
  return randomBytes(24).toString('base64url');
}

/** Compares two secrets in time that does not depend on where they differ. */
export function secretsEqual(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}
