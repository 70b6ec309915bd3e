import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';

/** What a link does: confirm a sign-up, or unsubscribe (the page link and RFC 8058's one-click POST). */
export type TokenPurpose = 'confirm' | 'unsubscribe';

/** A fresh `token_nonce` for a subscriber row: storing a new one voids every link made before. */
export const newNonce = (): string => randomBytes(16).toString('base64url');

/**
 * The confirm and unsubscribe links of subscribers: `{subscriberId}.{mac}`, an
 * HMAC-SHA256 over the purpose, the id and the row's nonce, keyed from the
 * install secret. Nothing secret is stored, the outbox can build a mail's
 * links long after the sign-up, and a link works for its own subscriber and
 * purpose only.
 */
export class SubscriberTokens {
  readonly #key: Buffer;

  constructor(installSecret: Uint8Array) {
    this.#key = Buffer.from(hkdfSync('sha256', installSecret, Buffer.alloc(0), 'monctl status subscriber links', 32));
  }

  make(purpose: TokenPurpose, subscriber: { id: number; token_nonce: string }): string {
    return `${subscriber.id}.${this.#mac(purpose, subscriber.id, subscriber.token_nonce).toString('base64url')}`;
  }

  /** The subscriber id a token names (to look the row up), or undefined for a malformed token. */
  idOf(token: string): number | undefined {
    const m = /^([1-9]\d{0,15})\.[A-Za-z0-9_-]{43}$/.exec(token);
    return m ? Number(m[1]) : undefined;
  }

  /** Whether `token` is this subscriber's link for `purpose`, in constant time. */
  verify(purpose: TokenPurpose, subscriber: { id: number; token_nonce: string }, token: string): boolean {
    const mac = token.slice(token.indexOf('.') + 1);
    const given = Buffer.from(mac, 'base64url');
    const wanted = this.#mac(purpose, subscriber.id, subscriber.token_nonce);
    return this.idOf(token) === subscriber.id && given.length === wanted.length && timingSafeEqual(given, wanted);
  }

  #mac(purpose: TokenPurpose, id: number, nonce: string): Buffer {
    return createHmac('sha256', this.#key).update(`${purpose}\n${id}\n${nonce}`).digest();
  }
}
