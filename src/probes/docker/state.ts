import type { IncomingHttpHeaders } from 'node:http';
import { header } from './http.ts';

/** A map that forgets its oldest entries past `max` (insertion order). */
class Bounded<V> extends Map<string, V> {
  private readonly max: number;
  constructor(max: number) {
    super();
    this.max = max;
  }
  override set(key: string, value: V): this {
    this.delete(key);
    super.set(key, value);
    if (this.size > this.max) this.delete(this.keys().next().value!);
    return this;
  }
}

/** Bearer tokens per registry, account and scope, until they expire; a disabled cache keeps none. */
export class TokenCache {
  private readonly entries = new Bounded<{ token: string; expiresAt: number }>(5_000);
  private readonly enabled: boolean;
  constructor(enabled = true) {
    this.enabled = enabled;
  }
  get(key: string): string | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= Date.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.token;
  }
  set(key: string, token: string, expiresAt: number): void {
    if (this.enabled && expiresAt > Date.now()) this.entries.set(key, { token, expiresAt });
  }
}

/**
 * What the DOCKER probe remembers between checks: the working scheme of each
 * registry, tokens, manifests by digest (immutable, so later checks cost only
 * HEAD requests, which registries such as Docker Hub do not count against the
 * pull limit) and the last `RateLimit-*` headers seen. The agent keeps no
 * tokens (`cacheTokens: false`): what the daemon's credentials obtained lives
 * only as long as the check that was sent them.
 */
export class RegistryState {
  readonly tokens: TokenCache;
  readonly manifests = new Bounded<unknown>(2_000);
  private readonly bases = new Bounded<{ base: string; until: number }>(1_000);
  private readonly limits = new Bounded<string>(1_000);

  constructor(opts: { cacheTokens?: boolean } = {}) {
    this.tokens = new TokenCache(opts.cacheTokens ?? true);
  }

  baseFor(endpoint: string): string | undefined {
    const entry = this.bases.get(endpoint);
    return entry && entry.until > Date.now() ? entry.base : undefined;
  }
  rememberBase(endpoint: string, base: string): void {
    this.bases.set(endpoint, { base, until: Date.now() + 10 * 60_000 });
  }
  forgetBase(endpoint: string): void {
    this.bases.delete(endpoint);
  }
  noteRateLimit(endpoint: string, headers: IncomingHttpHeaders): void {
    const limit = header(headers, 'ratelimit-limit');
    const remaining = header(headers, 'ratelimit-remaining');
    if (limit || remaining) this.limits.set(endpoint, `RateLimit-Limit ${limit ?? '?'}, RateLimit-Remaining ${remaining ?? '?'}`);
  }
  rateLimitText(endpoint: string): string | undefined {
    return this.limits.get(endpoint);
  }
}
