import type { Dispatcher } from 'undici';
import { describeError } from '../errors.ts';
import { header, parseChallenge, type RegistryResponse, send, statusLine } from './http.ts';
import { isLoopbackHost } from './reference.ts';
import type { RegistryState } from './state.ts';

/** A failed step of a DOCKER check; `rateLimited` turns the result into UNKNOWN instead of down. */
export class DockerStepError extends Error {
  step: string;
  rateLimited: boolean;
  constructor(step: string, message: string, rateLimited = false) {
    super(`${step}: ${message}`);
    this.step = step;
    this.rateLimited = rateLimited;
  }
}

export interface ClientOptions {
  registry: string;
  endpoint: string;
  skipTLS: boolean;
  credential: { username: string; password: string } | undefined;
  dispatcher: Dispatcher;
  timeoutMs: number;
  state: RegistryState;
}

interface Challenge {
  scheme: 'none' | 'basic' | 'bearer';
  realm?: string;
  service?: string;
}

/**
 * Talks to one registry for one check: finds the scheme (HTTPS, or plain HTTP
 * for loopback registries), answers the `/v2/` challenge with Basic
 * credentials or a Bearer token per scope, and reads `RateLimit-*` headers.
 */
export class RegistryClient {
  readonly opts: ClientOptions;
  base = '';
  private challenge: Challenge = { scheme: 'none' };
  constructor(opts: ClientOptions) {
    this.opts = opts;
  }

  private async exchange(step: string, url: string, method: 'GET' | 'HEAD', headers: Record<string, string>, body: boolean) {
    try {
      return await send(this.opts.dispatcher, url, method, headers, this.opts.timeoutMs, body);
    } catch (err) {
      throw new DockerStepError(step, `${method} ${url}: ${describeError(err, this.opts.timeoutMs)}`);
    }
  }

  /** A request without the registry's credentials (a redirect to another origin, such as blob storage). */
  plain(step: string, url: string, method: 'GET' | 'HEAD'): Promise<RegistryResponse> {
    return this.exchange(step, url, method, {}, false);
  }

  /** `GET /v2/`: picks the scheme and learns how the registry wants to be authenticated. */
  async ping(): Promise<void> {
    const { endpoint, state } = this.opts;
    const cachedBase = state.baseFor(endpoint);
    const bases = cachedBase ? [cachedBase] : [`https://${endpoint}`];
    if (!cachedBase && isLoopbackHost(endpoint)) bases.push(`http://${endpoint}`);
    let firstError: unknown;
    for (const base of bases) {
      let res: RegistryResponse;
      try {
        res = await send(this.opts.dispatcher, `${base}/v2/`, 'GET', {}, this.opts.timeoutMs, false);
      } catch (err) {
        firstError ??= err;
        continue;
      }
      // The plain-HTTP fallback counts only if a registry answers there (not an HTTPS port's 400).
      if (firstError !== undefined && res.status !== 200 && res.status !== 401) break;
      this.base = base;
      state.rememberBase(endpoint, base);
      if (res.status === 200) return;
      if (res.status === 429) throw new DockerStepError('registry', `rate limited (${statusLine(res)})`, true);
      if (res.status !== 401) {
        state.forgetBase(endpoint); // the next check tries every scheme again
        throw new DockerStepError('registry', `GET /v2/ answered ${statusLine(res)}`);
      }
      const challenge = parseChallenge(header(res.headers, 'www-authenticate'));
      if (challenge?.scheme === 'bearer' && challenge.params.realm) {
        this.challenge = { scheme: 'bearer', realm: challenge.params.realm, service: challenge.params.service };
      } else if (challenge?.scheme === 'basic') {
        if (!this.opts.credential) throw new DockerStepError('auth', `${this.opts.registry} requires a username and password; none stored`);
        this.challenge = { scheme: 'basic' };
      } else {
        throw new DockerStepError('registry', `unsupported authentication challenge "${header(res.headers, 'www-authenticate') ?? ''}"`);
      }
      return;
    }
    state.forgetBase(endpoint);
    throw new DockerStepError('registry', `cannot reach ${endpoint}: ${describeError(firstError, this.opts.timeoutMs)}`);
  }

  private basicHeader(): string | undefined {
    const c = this.opts.credential;
    return c ? `Basic ${Buffer.from(`${c.username}:${c.password}`).toString('base64')}` : undefined;
  }

  /** A Bearer token for `scope`, from the cache or the realm (validated: https or the registry's own host). */
  private async token(scope: string, fresh: boolean): Promise<string> {
    const { state, credential } = this.opts;
    const key = `${this.opts.endpoint}|${credential?.username ?? ''}|${scope}`;
    if (!fresh) {
      const cached = state.tokens.get(key);
      if (cached) return cached;
    }
    let realm: URL;
    try {
      realm = new URL(this.challenge.realm!);
    } catch {
      throw new DockerStepError('token', `invalid token realm "${this.challenge.realm}"`);
    }
    const registryHost = new URL(this.base).hostname;
    if (realm.protocol !== 'https:' && !(realm.protocol === 'http:' && realm.hostname === registryHost)) {
      throw new DockerStepError('token', `token realm ${realm.origin} refused: it must be https or on the registry's own host`);
    }
    if (this.challenge.service) realm.searchParams.set('service', this.challenge.service);
    realm.searchParams.set('scope', scope);
    if (credential) realm.searchParams.set('account', credential.username);
    const headers: Record<string, string> = { accept: 'application/json' };
    const basic = this.basicHeader();
    if (basic) headers.authorization = basic;
    const res = await this.exchange('token', realm.toString(), 'GET', headers, true);
    if (res.status === 429) throw new DockerStepError('token', `rate limited (${statusLine(res)})`, true);
    if (res.status !== 200) throw new DockerStepError('token', `${realm.origin}${realm.pathname} answered ${statusLine(res)}`);
    let parsed: { token?: string; access_token?: string; expires_in?: number; issued_at?: string };
    try {
      parsed = JSON.parse(res.body!.toString('utf8'));
    } catch {
      throw new DockerStepError('token', 'token response is not JSON');
    }
    const token = parsed.token ?? parsed.access_token;
    if (!token) throw new DockerStepError('token', 'token response carries no token');
    const issued = parsed.issued_at ? Date.parse(parsed.issued_at) : NaN;
    const start = Number.isFinite(issued) ? Math.min(issued, Date.now()) : Date.now();
    // The spec's default lifetime is 60 s; keep a margin so a token does not expire mid-check.
    state.tokens.set(key, token, start + Math.max(0, (parsed.expires_in ?? 60) - 10) * 1000);
    return token;
  }

  /**
   * A request under `scope`, authenticated as the challenge asked. A 401 with
   * a cached token refreshes it once; 429 is a rate-limit error (UNKNOWN).
   */
  async request(
    step: string,
    pathOrUrl: string,
    method: 'GET' | 'HEAD',
    scope: string,
    extra: Record<string, string> = {},
    body = false,
  ): Promise<RegistryResponse> {
    const url = pathOrUrl.startsWith('http') ? pathOrUrl : `${this.base}${pathOrUrl}`;
    for (let attempt = 0; ; attempt++) {
      const headers = { ...extra };
      if (this.challenge.scheme === 'basic') headers.authorization = this.basicHeader()!;
      if (this.challenge.scheme === 'bearer') headers.authorization = `Bearer ${await this.token(scope, attempt > 0)}`;
      const res = await this.exchange(step, url, method, headers, body);
      this.opts.state.noteRateLimit(this.opts.endpoint, res.headers);
      if (res.status === 429) {
        const limit = this.opts.state.rateLimitText(this.opts.endpoint);
        throw new DockerStepError(step, `rate limited by the registry (${statusLine(res)}${limit ? `, ${limit}` : ''})`, true);
      }
      if (res.status === 401 && this.challenge.scheme === 'bearer' && attempt === 0) continue;
      if (res.status === 401) {
        const why = this.opts.credential ? 'credentials rejected' : 'no credentials stored';
        throw new DockerStepError(step, `${statusLine(res)} (${why})`);
      }
      return res;
    }
  }
}
