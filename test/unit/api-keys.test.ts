import { API_KEY_SHAPE, generateApiKey, hashApiKey } from '@pos/shared/auth/keys';

/** The API looks up only keys of the issued shape: every key issued must have it. */
describe('API keys', () => {
  it('are issued in the shape the API looks up, each different', () => {
    const keys = Array.from({ length: 200 }, generateApiKey);
    for (const key of keys) expect(key).toMatch(API_KEY_SHAPE);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('are stored as their SHA-256, never as themselves', () => {
    const key = generateApiKey();
    expect(hashApiKey(key)).toMatch(/^[0-9a-f]{64}$/);
    expect(hashApiKey(key)).not.toContain(key);
  });
});
