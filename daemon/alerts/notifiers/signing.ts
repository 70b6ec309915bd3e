import { createHmac, randomBytes } from 'node:crypto';

/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com): the secret
 * is `whsec_` + base64 of the key; each request carries `webhook-id`,
 * `webhook-timestamp` (Unix seconds) and `webhook-signature: v1,<base64 of
 * HMAC-SHA256(key, "<id>.<timestamp>.<body>")>`.
 */
const PREFIX = 'whsec_';

/** A new secret: 32 random bytes. */
export function generateSigningSecret(): string {
  return PREFIX + randomBytes(32).toString('base64');
}

/** `whsec_` + canonical base64 of 24 to 64 bytes (the spec's bounds). */
export function validSigningSecret(secret: string): boolean {
  if (!secret.startsWith(PREFIX)) return false;
  const b64 = secret.slice(PREFIX.length);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64) || b64.length % 4 !== 0) return false;
  const key = Buffer.from(b64, 'base64');
  return key.length >= 24 && key.length <= 64;
}

export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/** The three headers for one attempt of `body` (the exact bytes sent). */
export function signWebhook(secret: string, id: string, body: string, at = Date.now()): SignedHeaders {
  const timestamp = String(Math.floor(at / 1000));
  const key = Buffer.from(secret.slice(PREFIX.length), 'base64');
  const signature = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${signature}` };
}
