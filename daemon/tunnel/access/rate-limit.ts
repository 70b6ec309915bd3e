import { dialSource } from '../dial-limiter.ts';

interface Bucket {
  tokens: number;
  at: number;
}

/** Buckets kept at most; beyond it the oldest-touched ones go first (a flood of fresh addresses cannot grow memory). */
const MAX_BUCKETS = 100_000;

/**
 * Token buckets per route and client: `burst` requests at once, refilled at
 * `perSecond`. IPv6 clients count per /64 (one host commonly holds a whole
 * /64 and could otherwise change address per request).
 */
export class RateLimiter {
  readonly #buckets = new Map<string, Bucket>();

  /** 0 when the request may go, else the seconds until it could. */
  take(routeId: number, client: string, perSecond: number, burst: number, now = Date.now()): number {
    const key = `${routeId}|${dialSource(client)}`;
    let bucket = this.#buckets.get(key);
    if (bucket) {
      this.#buckets.delete(key); // re-inserted below: the map stays in least-recently-used order
      bucket.tokens = Math.min(burst, bucket.tokens + ((now - bucket.at) / 1000) * perSecond);
      bucket.at = now;
    } else {
      bucket = { tokens: burst, at: now };
      if (this.#buckets.size >= MAX_BUCKETS) this.#buckets.delete(this.#buckets.keys().next().value!);
    }
    this.#buckets.set(key, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return (1 - bucket.tokens) / perSecond;
  }
}
