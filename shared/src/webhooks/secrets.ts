/**
 * Endpoint secrets: `whsec_` and base64 of 32 random bytes (Standard Webhooks' form), shown once
 * and stored encrypted (AES-256-GCM) under a key derived by HKDF-SHA256 from the server secret
 * (WEBHOOK_SECRET_KEY, else API_KEY_SECRET), so that a database dump alone does not reveal them.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const SECRET_BYTES = 32;
const IV_BYTES = 12;
const HKDF_INFO = 'pos webhook endpoint secrets v1';

export function newWebhookSecret(): string {
  return `whsec_${randomBytes(SECRET_BYTES).toString('base64')}`;
}

export class SecretBox {
  private readonly key: Buffer;

  constructor(serverSecret: string) {
    this.key = Buffer.from(hkdfSync('sha256', serverSecret, Buffer.alloc(0), HKDF_INFO, 32));
  }

  /** `v1.<iv>.<tag>.<ciphertext>`, each base64. */
  seal(secret: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const data = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return ['v1', iv, cipher.getAuthTag(), data]
      .map((part) => (typeof part === 'string' ? part : part.toString('base64')))
      .join('.');
  }

  /** Throws when the text was sealed under another key (or altered). */
  open(sealed: string): string {
    const [version, iv, tag, data] = sealed.split('.');
    if (version !== 'v1' || !iv || !tag || data === undefined) throw new Error('not a sealed webhook secret');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64'));
    decipher.setAuthTag(Buffer.from(tag, 'base64'));
    return Buffer.concat([decipher.update(Buffer.from(data, 'base64')), decipher.final()]).toString('utf8');
  }
}
