import { createHash, randomBytes } from 'node:crypto';

/** A random opaque token with a readable prefix, e.g. `mct_…` for registration tokens. */
export function randomToken(prefix: string, bytes = 32): string {
  return `${prefix}_${randomBytes(bytes).toString('base64url')}`;
}

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
