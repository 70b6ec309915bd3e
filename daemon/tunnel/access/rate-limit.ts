import { TokenBuckets } from '../../util/token-buckets.ts';
import { dialSource } from '../dial-limiter.ts';

/**
 * Token buckets per route and client: `burst` requests at once, refilled at
 * `perSecond` (a route's own limit, so it comes with each call). IPv6 clients
 * count per /64 (one host commonly holds a whole /64 and could otherwise
 * change address per request).
 */
export class RateLimiter {
  readonly #buckets = new TokenBuckets();

  /** 0 when the request may go, else the seconds until it could. */
  take(routeId: number, client: string, perSecond: number, burst: number, now = Date.now()): number {
    return this.#buckets.take(`${routeId}|${dialSource(client)}`, perSecond, burst, now);
  }
}
