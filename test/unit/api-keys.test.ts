import { createHmac, randomBytes } from 'node:crypto';
import {
  API_KEY_SHAPE,
  generateApiKey,
  generateApiKeySecret,
  hashApiKey,
  isSignedKey,
  keyFormOf,
  UNSIGNED_API_KEY_SHAPE,
} from '@pos/shared/auth/keys';
import { issuedSessionSchema, rotatedSessionSchema } from '@pos/shared/schemas/responses';

const SECRET = 'a-secret-of-at-least-32-characters-0001';
const OTHER = 'a-secret-of-at-least-32-characters-0002';

/** The key with one character replaced by another of the alphabet: one bit pattern changed. */
function tampered(key: string, at: number): string {
  const c = key[at]!;
  return `${key.slice(0, at)}${c === 'A' ? 'B' : 'A'}${key.slice(at + 1)}`;
}

/** The API looks up only keys of the issued shape that carry the deployment's MAC: every key issued must. */
describe('API keys', () => {
  it('are issued in the shape the API looks up, each different, with 32 random bytes', () => {
    const keys = Array.from({ length: 200 }, () => generateApiKey(SECRET));
    for (const key of keys) {
      expect(key).toMatch(API_KEY_SHAPE);
      expect(key).toHaveLength(4 + 64);
      expect(Buffer.from(key.slice(4), 'base64url')).toHaveLength(48);
    }
    expect(new Set(keys).size).toBe(keys.length);
    expect(new Set(keys.map((k) => k.slice(4, 47))).size).toBe(keys.length);
  });

  it('carry the first 16 bytes of HMAC-SHA256(secret, label ‖ random): the format keys in the field depend on', () => {
    const key = generateApiKey(SECRET);
    const bytes = Buffer.from(key.slice(4), 'base64url');
    const random = bytes.subarray(0, 32);
    const mac = createHmac('sha256', SECRET).update('pos api key mac v1\n').update(random).digest().subarray(0, 16);
    expect(bytes.subarray(32).equals(mac)).toBe(true);
    // without the label, the same HMAC does not pass: a MAC made for anything else is no key's
    const unlabelled = createHmac('sha256', SECRET).update(random).digest().subarray(0, 16);
    expect(isSignedKey(`pos_${Buffer.concat([random, unlabelled]).toString('base64url')}`, [SECRET])).toBe(false);
  });

  it('verify under the secret that signed them, among others, and under no other', () => {
    const key = generateApiKey(SECRET);
    expect(isSignedKey(key, [SECRET])).toBe(true);
    expect(isSignedKey(key, [OTHER, SECRET])).toBe(true);
    expect(isSignedKey(key, [OTHER])).toBe(false);
    expect(isSignedKey(key, [])).toBe(false);
  });

  it('fail verification when any character of the random part or the MAC changes', () => {
    const key = generateApiKey(SECRET);
    for (let at = 4; at < key.length; at += 1) expect(isSignedKey(tampered(key, at), [SECRET])).toBe(false);
  });

  it('made up in the issued shape, do not verify', () => {
    for (let i = 0; i < 10_000; i += 1) {
      const madeUp = `pos_${randomBytes(48).toString('base64url')}`;
      expect(madeUp).toMatch(API_KEY_SHAPE);
      expect(isSignedKey(madeUp, [SECRET, OTHER])).toBe(false);
    }
  });

  it('are told apart before any lookup: signed, unsigned (the shape issued before), made up', () => {
    const secrets = [SECRET, OTHER];
    expect(keyFormOf(generateApiKey(SECRET), secrets)).toBe('signed');
    expect(keyFormOf(generateApiKey(OTHER), secrets)).toBe('signed');
    expect(keyFormOf(generateApiKey(OTHER), [SECRET])).toBe('made-up');
    const unsigned = `pos_${randomBytes(32).toString('base64url')}`;
    expect(unsigned).toMatch(UNSIGNED_API_KEY_SHAPE);
    expect(keyFormOf(unsigned, secrets)).toBe('unsigned');
    for (const madeUp of [
      '',
      'pos_',
      'pos_wrong',
      `pos_${randomBytes(48).toString('base64url')}`,
      `POS_${generateApiKey(SECRET).slice(4)}`,
      `${generateApiKey(SECRET)}=`,
      ` ${generateApiKey(SECRET)}`,
    ]) {
      expect(keyFormOf(madeUp, secrets)).toBe('made-up');
    }
  });

  it('are published in the issued shape', () => {
    expect(issuedSessionSchema.properties.apiKey.pattern).toBe(API_KEY_SHAPE.source);
    expect(rotatedSessionSchema.properties.apiKey.pattern).toBe(API_KEY_SHAPE.source);
  });

  it('are stored as their SHA-256, never as themselves', () => {
    const key = generateApiKey(SECRET);
    expect(hashApiKey(key)).toMatch(/^[0-9a-f]{64}$/);
    expect(hashApiKey(key)).not.toContain(key);
  });

  it('are signed under generated secrets that API_KEY_SECRET accepts', () => {
    const secret = generateApiKeySecret();
    expect(secret.length).toBeGreaterThanOrEqual(32);
    expect(secret).toMatch(/^[^,\s]+$/);
    expect(isSignedKey(generateApiKey(secret), [secret])).toBe(true);
  });
});
