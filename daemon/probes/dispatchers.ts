import { Agent, type Dispatcher, interceptors } from 'undici';

/**
 * The probe engine's undici dispatchers: one keep-alive pool for verified TLS
 * and one for `skipTLS` resources, so that accepting a bad certificate is
 * scoped to the resources that asked for it. Connections are reused across
 * checks of the same origin.
 */
export interface Dispatchers {
  /** Follows up to 5 redirects (HTTP checks). */
  http(skipTLS: boolean): Dispatcher;
  /** No redirect following; the DOCKER client decides per request. */
  raw(skipTLS: boolean): Dispatcher;
  close(): Promise<void>;
}

export const MAX_REDIRECTS = 5;

export function createDispatchers(timeoutMs: number): Dispatchers {
  const options = {
    keepAliveTimeout: 30_000,
    keepAliveMaxTimeout: 120_000,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    connectTimeout: timeoutMs,
  };
  const verified = new Agent({ ...options, connect: { timeout: timeoutMs } });
  const insecure = new Agent({ ...options, connect: { timeout: timeoutMs, rejectUnauthorized: false } });
  const redirect = interceptors.redirect({ maxRedirections: MAX_REDIRECTS });
  const verifiedHttp = verified.compose(redirect);
  const insecureHttp = insecure.compose(redirect);
  return {
    http: (skipTLS) => (skipTLS ? insecureHttp : verifiedHttp),
    raw: (skipTLS) => (skipTLS ? insecure : verified),
    async close() {
      await Promise.all([verified.close(), insecure.close()]);
    },
  };
}
