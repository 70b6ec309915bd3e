/**
 * Token buckets by key (a client address, a push check) in a map of bounded size: past
 * `maxKeys` the least recently used bucket goes, so an attacker with many addresses costs a
 * fixed amount of memory. A forgotten key starts again with a full bucket, which is what it
 * would have after an idle spell anyway; the buckets that matter (a flood's) stay in use.
 */
export interface RateLimit {
  /** Tokens added per second. */
  perSecond: number;
  /** The bucket's size: how many may come at once. */
  burst: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

export class RateLimiter {
  readonly #buckets = new Map<string, Bucket>();
  readonly #limit: RateLimit;
  readonly #maxKeys: number;

  constructor(limit: RateLimit, maxKeys: number) {
    this.#limit = limit;
    this.#maxKeys = maxKeys;
  }

  /** Takes one token for `key` at `now` (ms): 0 when allowed, else the seconds until one is there (for Retry-After). */
  take(key: string, now: number): number {
    const { perSecond, burst } = this.#limit;
    let bucket = this.#buckets.get(key);
    if (bucket) {
      this.#buckets.delete(key); // re-inserted below: Map order is the LRU order
      bucket.tokens = Math.min(burst, bucket.tokens + (Math.max(0, now - bucket.at) / 1000) * perSecond);
      bucket.at = now;
    } else {
      if (this.#buckets.size >= this.#maxKeys) this.#buckets.delete(this.#buckets.keys().next().value!);
      bucket = { tokens: burst, at: now };
    }
    this.#buckets.set(key, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - bucket.tokens) / perSecond));
  }

  get size(): number {
    return this.#buckets.size;
  }
}
