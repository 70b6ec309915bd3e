import type { IncomingMessage } from 'node:http';
import { HttpError } from '../../../src/errors.ts';
import { RateLimiter } from '../../tunnel/access/rate-limit.ts';
import { streamClient } from '../live-caps.ts';

/** Sign-ups one client (IPv4 address, IPv6 /64) may make across pages: 10 at once, then 10 an hour. */
export const CLIENT_BURST = 10;
export const CLIENT_PER_HOUR = 10;
/** Sign-ups of one address on one page: 3 at once, then 3 an hour (it gets one confirmation an hour whatever the count). */
export const ADDRESS_BURST = 3;
export const ADDRESS_PER_HOUR = 3;

const tooMany = (seconds: number, what: string) => {
  const wait = Math.max(1, Math.ceil(seconds));
  return new HttpError(429, 'too-many-sign-ups', `Too many sign-ups ${what}; retry in ${wait} s`, {
    headers: { 'Retry-After': String(wait) },
  });
};

/**
 * The sign-up throttles, in memory per daemon (token buckets, bounded): per
 * client as the edge and the live streams count it (`--trusted-proxies`:
 * the forwarded client; IPv6 by its /64), and per (page, address key).
 */
export class SignupLimits {
  readonly #clients = new RateLimiter();
  readonly #addresses = new RateLimiter();

  /** The client a sign-up counts against. */
  clientOf(req: IncomingMessage): string {
    return streamClient(req);
  }

  /** Throws 429 with Retry-After when the client is over its budget. */
  takeClient(client: string, now: number): void {
    // One bucket for every page (route id 0): a flood spread over pages is still one client's.
    const wait = this.#clients.take(0, client, CLIENT_PER_HOUR / 3600, CLIENT_BURST, now);
    if (wait > 0) throw tooMany(wait, 'from this address');
  }

  /**
   * Throws 429 when this address was signed up too often lately. It says
   * nothing of the address's state (pending, confirmed or unknown alike).
   * The key is an email address, never an IP: the limiter keeps it as it is.
   */
  takeAddress(pageId: number, key: string, now: number): void {
    const wait = this.#addresses.take(pageId, key, ADDRESS_PER_HOUR / 3600, ADDRESS_BURST, now);
    if (wait > 0) throw tooMany(wait, 'for this email address');
  }
}
