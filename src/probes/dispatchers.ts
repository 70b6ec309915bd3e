import type { TLSSocket } from 'node:tls';
import { Agent, buildConnector, type Dispatcher, interceptors } from 'undici';

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
  /** The notAfter (epoch ms) of the certificate last served on a TLS connection to this URL's origin. */
  certExpiry(url: string): number | undefined;
  /** The peer address of the connection last made to this URL's origin (`[IP]` in conditions). */
  remoteAddress(url: string): string | undefined;
  close(): Promise<void>;
}

/** `host:port` of an origin, with the default port filled in. */
function originKey(hostname: string, port: string, protocol: string): string {
  return `${hostname.toLowerCase()}:${port || (protocol === 'https:' ? '443' : '80')}`;
}

/** What the connector notes of each connection, by origin. */
interface Seen {
  certs: Map<string, number>;
  addresses: Map<string, string>;
}

/**
 * undici's connector, plus a note of each TLS peer certificate's notAfter and
 * each peer address by origin. undici does not expose a response's socket, so
 * they are caught when the connection is made; keep-alive reuses that connection.
 */
function recordingConnector(options: buildConnector.BuildOptions, { certs, addresses }: Seen): buildConnector.connector {
  const connect = buildConnector(options);
  return (opts, callback) =>
    connect(opts, (...args) => {
      const [err, socket] = args;
      if (!err && socket.remoteAddress) addresses.set(originKey(opts.hostname, opts.port, opts.protocol), socket.remoteAddress);
      if (!err && opts.protocol === 'https:') {
        const notAfter = Date.parse((socket as TLSSocket).getPeerCertificate?.()?.valid_to ?? '');
        if (Number.isFinite(notAfter)) certs.set(originKey(opts.hostname, opts.port, opts.protocol), notAfter);
      }
      callback(...args);
    });
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
  const seen: Seen = { certs: new Map(), addresses: new Map() };
  const verified = new Agent({ ...options, connect: recordingConnector({ timeout: timeoutMs }, seen) });
  const insecure = new Agent({ ...options, connect: recordingConnector({ timeout: timeoutMs, rejectUnauthorized: false }, seen) });
  const byOrigin = <T>(map: Map<string, T>, url: string): T | undefined => {
    try {
      const u = new URL(url);
      // URL.hostname keeps IPv6 brackets; undici's hostname does not.
      return map.get(originKey(u.hostname.replace(/^\[|\]$/g, ''), u.port, u.protocol));
    } catch {
      return undefined;
    }
  };
  const redirect = interceptors.redirect({ maxRedirections: MAX_REDIRECTS });
  const verifiedHttp = verified.compose(redirect);
  const insecureHttp = insecure.compose(redirect);
  return {
    http: (skipTLS) => (skipTLS ? insecureHttp : verifiedHttp),
    raw: (skipTLS) => (skipTLS ? insecure : verified),
    certExpiry: (url) => byOrigin(seen.certs, url),
    remoteAddress: (url) => byOrigin(seen.addresses, url),
    async close() {
      await Promise.all([verified.close(), insecure.close()]);
    },
  };
}
