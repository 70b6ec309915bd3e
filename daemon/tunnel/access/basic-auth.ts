import { createHash, randomBytes } from 'node:crypto';
import { DUMMY_HASH, verifyPassword } from '../../auth/passwords.ts';

/** A verified `Authorization` value is trusted again for this long without another scrypt. */
const CACHE_MS = 5 * 60_000;
const CACHE_MAX = 10_000;

/**
 * Basic auth against a route's users (scrypt hashes). A scrypt takes about
 * 50 ms and 32 MiB, so a verified header is remembered for a few minutes,
 * keyed by a salted digest of the route, the stored hash and the header: a
 * changed password or user list misses the cache at once.
 */
export class BasicAuth {
  readonly #salt = randomBytes(16);
  readonly #verified = new Map<string, number>();

  /** The username when the header carries a right username and password, else undefined. */
  async check(routeId: number, users: ReadonlyMap<string, string>, header: string | undefined, now = Date.now()): Promise<string | undefined> {
    const credentials = parseBasic(header);
    if (!credentials) return undefined;
    const hash = users.get(credentials.username);
    const key = createHash('sha256').update(this.#salt).update(`${routeId}\0${hash ?? ''}\0${header}`).digest('base64');
    const until = this.#verified.get(key);
    if (until !== undefined && until > now && hash) return credentials.username;
    // An unknown user costs the same scrypt, so timing does not tell which usernames exist.
    const ok = await verifyPassword(credentials.password, hash ?? DUMMY_HASH);
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
