import { createHash } from 'node:crypto';
import { LruMap } from '../lru-map.ts';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { Agent, buildConnector, type Dispatcher, interceptors } from 'undici';
import { timeSocket, timingInterceptor } from './connection-timing.ts';

/**
 * The probe engine's undici dispatchers: one keep-alive pool for verified TLS
 * and one for `skipTLS` resources, so that accepting a bad certificate is
 * scoped to the resources that asked for it, and one per client certificate
 * (mTLS). Connections are reused across checks of the same origin.
 */
export interface Dispatchers {
  /** HTTP checks: follows up to MAX_REDIRECTS redirects unless the request says `maxRedirections: 0`; times each check. */
  http(skipTLS: boolean, clientCert?: { cert: string; key: string } | null): Dispatcher;
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
 * each peer address by origin, and of each new socket's phase times (the
 * check's timing). undici does not expose a response's socket, so they are
 * caught when the connection is made; keep-alive reuses that connection.
 */
function recordingConnector(options: buildConnector.BuildOptions, { certs, addresses }: Seen): buildConnector.connector {
  const connect = buildConnector(options);
  return (opts, callback) => {
    const socket = connect(opts, (...args) => {
      const [err, socket] = args;
      if (!err && socket.remoteAddress) addresses.set(originKey(opts.hostname, opts.port, opts.protocol), socket.remoteAddress);
      if (!err && opts.protocol === 'https:') {
        const notAfter = Date.parse((socket as TLSSocket).getPeerCertificate?.()?.valid_to ?? '');
        if (Number.isFinite(notAfter)) certs.set(originKey(opts.hostname, opts.port, opts.protocol), notAfter);
      }
      callback(...args);
    }) as unknown as Socket | undefined;
    if (socket) timeSocket(socket, opts.protocol === 'https:');
    return socket as never;
  };
}

/** Redirects followed by default; the next one is a failure that says so (docs/DECISIONS.md#probe-requests). */
export const MAX_REDIRECTS = 10;
/** Client certificates with a pool of their own; past it the least recently used pool is closed. */
export const MAX_CLIENT_CERT_POOLS = 256;

/** `maxClientCertPools`: tests lower it to see a pool evicted. */
export function createDispatchers(timeoutMs: number, { maxClientCertPools = MAX_CLIENT_CERT_POOLS } = {}): Dispatchers {
  // The checks' own timeout: the runner keeps one set of pools per check timeout (runner.ts).
  const limit = timeoutMs;
  const options = {
    keepAliveTimeout: 30_000,
    keepAliveMaxTimeout: 120_000,
    headersTimeout: limit,
    bodyTimeout: limit,
    connectTimeout: limit,
  };
  const seen: Seen = { certs: new Map(), addresses: new Map() };
  const agent = (tls: buildConnector.BuildOptions) =>
    new Agent({ ...options, connect: recordingConnector({ timeout: limit, ...tls }, seen) });
  const verified = agent({});
  const insecure = agent({ rejectUnauthorized: false });
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
  const forChecks = (a: Agent) => a.compose(timingInterceptor, redirect);
  const verifiedHttp = forChecks(verified);
  const insecureHttp = forChecks(insecure);
  const withCert = new LruMap<string, { agent: Agent; http: Dispatcher }>(
    maxClientCertPools,
    (evicted) => void evicted.agent.close().catch(() => undefined),
  );
  const certPool = (skipTLS: boolean, pem: { cert: string; key: string }): Dispatcher => {
    const key = createHash('sha256').update(`${skipTLS}\0${pem.cert}\0${pem.key}`).digest('hex');
    return withCert.getOrSet(key, () => {
      const a = agent({ cert: pem.cert, key: pem.key, ...(skipTLS ? { rejectUnauthorized: false } : {}) });
      return { agent: a, http: forChecks(a) };
    }).http;
  };
  return {
    http: (skipTLS, clientCert) => (clientCert ? certPool(skipTLS, clientCert) : skipTLS ? insecureHttp : verifiedHttp),
    raw: (skipTLS) => (skipTLS ? insecure : verified),
    certExpiry: (url) => byOrigin(seen.certs, url),
    remoteAddress: (url) => byOrigin(seen.addresses, url),
    async close() {
      const pools = [verified, insecure, ...[...withCert.values()].map((p) => p.agent)];
      withCert.clear();
      await Promise.all(pools.map((p) => p.close()));
    },
  };
}
