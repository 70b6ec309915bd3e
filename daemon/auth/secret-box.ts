import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/**
 * Symmetric encryption of small secrets at rest (registry passwords):
 * AES-256-GCM with a key derived from the install secret by HKDF-SHA256, so
 * every pod on one database can decrypt and a copied database alone cannot.
 * Stored form: `v1:<base64 of iv(12) | tag(16) | ciphertext>`.
 */
export class SecretBox {
  readonly #key: Buffer;

  constructor(installSecret: Uint8Array, purpose: string) {
    this.#key = Buffer.from(hkdfSync('sha256', installSecret, Buffer.alloc(0), `monctl ${purpose}`, 32));
  }

  seal(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return `v1:${Buffer.concat([iv, cipher.getAuthTag(), data]).toString('base64')}`;
  }

  /** The plain text, or undefined when the box is not ours or was tampered with. */
  open(sealed: string): string | undefined {
    if (!sealed.startsWith('v1:')) return undefined;
    const raw = Buffer.from(sealed.slice(3), 'base64');
    if (raw.length < 28) return undefined;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.#key, raw.subarray(0, 12));
      decipher.setAuthTag(raw.subarray(12, 28));
      return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
    } catch {
      return undefined;
    }
  }
}

/** The purposes boxes are derived for: one key each, so that one purpose's box cannot open another's. */
export type SecretPurpose =
  | 'resource-secrets'
  | 'registry-credentials'
  | 'notifier-secrets'
  | 'certificates'
  | 'subscriber-secrets'
  | 'sso-transactions'
  | 'route-sessions'
  | 'totp-secrets'
  | 'pending-logins';

const boxes = new WeakMap<Uint8Array, Map<SecretPurpose, SecretBox>>();

/** The box of one purpose for an install secret, derived once: HKDF on every check or send would be waste. */
export function boxFor(installSecret: Uint8Array, purpose: SecretPurpose): SecretBox {
  let byPurpose = boxes.get(installSecret);
  if (!byPurpose) boxes.set(installSecret, (byPurpose = new Map()));
  let box = byPurpose.get(purpose);
  if (!box) byPurpose.set(purpose, (box = new SecretBox(installSecret, purpose)));
  return box;
}
