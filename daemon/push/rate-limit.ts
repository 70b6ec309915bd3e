import { TokenBuckets } from '../util/token-buckets.ts';

/** A ping limit: token buckets (daemon/util/token-buckets.ts) by key, a client address or a push check. */
export interface RateLimit {
  /** Tokens added per second. */
  perSecond: number;
  /** The bucket's size: how many may come at once. */
  burst: number;
}

export class RateLimiter {
  readonly #buckets: TokenBuckets;
  readonly #limit: RateLimit;

  constructor(limit: RateLimit, maxKeys: number) {
    this.#limit = limit;
    this.#buckets = new TokenBuckets(maxKeys);
  }

  /** Takes one token for `key` at `now` (ms): 0 when allowed, else the whole seconds until one is there (for Retry-After). */
  take(key: string, now: number): number {
    const wait = this.#buckets.take(key, this.#limit.perSecond, this.#limit.burst, now);
    return wait === 0 ? 0 : Math.max(1, Math.ceil(wait));
  }

  get size(): number {
    return this.#buckets.size;
  }
}
