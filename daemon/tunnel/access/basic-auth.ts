import { createHash, randomBytes } from 'node:crypto';
import { DUMMY_HASH, verifyPassword } from '../../auth/passwords.ts';

/** A verified `Authorization` value is trusted again for this long without another scrypt. */
const CACHE_MS = 5 * 60_000;
const CACHE_MAX = 10_000;
/**
 * Scrypts at once: two of libuv's four threads, so that a flood of wrong
 * passwords leaves the others to the rest of the daemon (files, DNS, zlib,
 * logins); a few dozen more wait, and beyond them a check is refused as busy.
 */
const MAX_RUNNING = 2;
const MAX_WAITING = 32;

/** The answer when too many checks are under way: the request is refused (429) without a scrypt. */
export const BUSY = Symbol('busy');

/**
 * Basic auth against a route's users (scrypt hashes). A scrypt takes about
 * 50 ms and 32 MiB, so a verified header is remembered for a few minutes,
 * keyed by a salted digest of the route, the stored hash and the header: a
 * changed password or user list misses the cache at once.
 */
export class BasicAuth {
  readonly #salt = randomBytes(16);
  readonly #verified = new Map<string, number>();
  #running = 0;
  readonly #waiting: Array<() => void> = [];

  /** The username when the header carries a right username and password, BUSY when too many checks wait, else undefined. */
  async check(
    routeId: number,
    users: ReadonlyMap<string, string>,
    header: string | undefined,
    now = Date.now(),
  ): Promise<string | undefined | typeof BUSY> {
    const credentials = parseBasic(header);
    if (!credentials) return undefined;
    const hash = users.get(credentials.username);
    const key = createHash('sha256')
      .update(this.#salt)
      .update(`${routeId}\0${hash ?? ''}\0${header}`)
      .digest('base64');
    const until = this.#verified.get(key);
    if (until !== undefined && until > now && hash) return credentials.username;
    if (this.#running < MAX_RUNNING) this.#running++;
    else if (this.#waiting.length >= MAX_WAITING) return BUSY;
    else await new Promise<void>((resolve) => this.#waiting.push(resolve)); // a finishing check hands its slot over
    let ok: boolean;
    try {
      // An unknown user costs the same scrypt, so timing does not tell which usernames exist.
      ok = await verifyPassword(credentials.password, hash ?? DUMMY_HASH);
    } finally {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#running--;
    }
    if (!ok || !hash) return undefined;
    if (this.#verified.size >= CACHE_MAX) this.#verified.delete(this.#verified.keys().next().value!);
    this.#verified.set(key, now + CACHE_MS);
    return credentials.username;
  }
}

/** `Basic base64(user:password)` (RFC 7617), or undefined. */
export function parseBasic(header: string | undefined): { username: string; password: string } | undefined {
  const match = header ? /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header) : null;
  if (!match) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}
