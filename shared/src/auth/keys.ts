import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** The random part of a key: at least 32 bytes of entropy (docs/security.md#api-keys). */
const KEY_RANDOM_BYTES = 32;
/** The MAC part: 128 bits, so a made-up key passes with probability 2^-128 per secret. */
const KEY_MAC_BYTES = 16;
/** What a key's MAC is computed over, before its random part: an HMAC made for anything else never passes. */
const KEY_MAC_LABEL = Buffer.from('pos api key mac v1\n', 'utf8');

/**
 * The shape of every key generateApiKey makes: `pos_` and base64url(32 random bytes ‖ 16-byte MAC),
 * 64 characters. 64 characters are exactly 48 bytes, so each key has one spelling.
 */
export const API_KEY_SHAPE = /^pos_[A-Za-z0-9_-]{64}$/;

/** Keys issued before keys were signed: `pos_` and 32 random bytes in base64url (43 characters), no MAC. */
export const UNSIGNED_API_KEY_SHAPE = /^pos_[A-Za-z0-9_-]{43}$/;

/**
 * What a key is before any lookup: `signed` carries the MAC of one of the deployment's secrets;
 * `unsigned` has the shape of the keys issued before (only a lookup can tell whether it is one);
 * `made-up` is neither, so the deployment never issued it.
 */
export type KeyForm = 'signed' | 'unsigned' | 'made-up';

function keyMac(secret: string, random: Buffer): Buffer {
  return createHmac('sha256', secret).update(KEY_MAC_LABEL).update(random).digest().subarray(0, KEY_MAC_BYTES);
}

/** 32 random bytes and their MAC; the prefix makes a leaked key easy to recognise in a secret scanner. */
export function generateApiKey(secret: string): string {
  const random = randomBytes(KEY_RANDOM_BYTES);
  return `pos_${Buffer.concat([random, keyMac(secret, random)]).toString('base64url')}`;
}

/** True when the key has the issued shape and its MAC is that of one of the secrets (compared in constant time). */
export function isSignedKey(key: string, secrets: readonly string[]): boolean {
  if (!API_KEY_SHAPE.test(key)) return false;
  const bytes = Buffer.from(key.slice('pos_'.length), 'base64url');
  const random = bytes.subarray(0, KEY_RANDOM_BYTES);
  const mac = bytes.subarray(KEY_RANDOM_BYTES);
  // Which secret matched is no secret: stopping at the first match leaks nothing of any MAC.
  return secrets.some((secret) => timingSafeEqual(mac, keyMac(secret, random)));
}

/** `secrets`: those whose keys are accepted (API_KEY_SECRET, then API_KEY_SECRET_PREVIOUS). */
export function keyFormOf(key: string, secrets: readonly string[]): KeyForm {
  if (isSignedKey(key, secrets)) return 'signed';
  return UNSIGNED_API_KEY_SHAPE.test(key) ? 'unsigned' : 'made-up';
}

/** Keys carry 256 bits of entropy, so a fast hash is enough: nobody can guess their way back. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

export function generateAdminToken(): string {
  return randomBytes(24).toString('base64url');
}

/** A secret for API_KEY_SECRET: 32 random bytes, 43 characters (no comma, no space). */
export function generateApiKeySecret(): string {
  return randomBytes(32).toString('base64url');
}

/** Compares two secrets in time that does not depend on where they differ. */
export function secretsEqual(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}
