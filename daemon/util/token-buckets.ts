import { LruMap } from '../../src/lru-map.ts';

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * Token buckets by key, in a map of bounded size: past `maxKeys` the least
 * recently used bucket goes, so a flood of fresh keys (client addresses)
 * costs a fixed amount of memory. A forgotten key starts again with a full
 * bucket, which is what it would have after an idle spell anyway; the
 * buckets that matter (a flood's) stay in use. The rate is the caller's per
 * call, so one map serves limits that settings or routes change.
 */
export class TokenBuckets {
  readonly #buckets: LruMap<string, Bucket>;

  constructor(maxKeys = 100_000) {
    this.#buckets = new LruMap(maxKeys);
  }

  /** Takes one token for `key` at `now` (ms): 0 when allowed, else the seconds (fractional) until one is there. */
  take(key: string, perSecond: number, burst: number, now = Date.now()): number {
    let bucket = this.#buckets.get(key);
    if (bucket) {
      // A clock that stepped back refills nothing rather than draining.
      bucket.tokens = Math.min(burst, bucket.tokens + (Math.max(0, now - bucket.at) / 1000) * perSecond);
      bucket.at = now;
    } else {
      bucket = { tokens: burst, at: now };
      this.#buckets.set(key, bucket);
    }
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return (1 - bucket.tokens) / perSecond;
  }

  get size(): number {
    return this.#buckets.size;
  }
}
