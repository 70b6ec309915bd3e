import type { IncomingMessage, ServerResponse } from 'node:http';
import { createSecureServer, type Http2SecureServer, type Http2ServerRequest, type Http2ServerResponse } from 'node:http2';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { SecureContext } from 'node:tls';
import { boundH2Request } from './h2-request-timeout.ts';
import { CountedH2Response, H2_MAX_STREAMS } from './shed-slow-h2-streams.ts';
import type { TlsProfile } from '../config/values.ts';
import { tlsProfileOptions } from './tls-profile.ts';

/** ALPN protocol of the TLS-ALPN-01 challenge (RFC 8737). */
export const ACME_TLS_ALPN = 'acme-tls/1';

/**
 * Certificates for the HTTPS edge, by SNI name. Provided by the certificates
 * capability (daemon/certs/).
 */
export interface EdgeTlsProvider {
  /** The context serving `servername`, or undefined (no certificate: the handshake fails). */
  context(servername: string): SecureContext | undefined;
  /** TLS-ALPN-01: the challenge certificate for `servername`, when an order of this or another daemon waits on one. */
  challenge(servername: string): Promise<SecureContext | undefined>;
}

export interface EdgeTlsOptions {
  limits: {
    requestTimeout: number;
    headersTimeout: number;
    keepAliveTimeout: number;
    maxHeaderSize: number;
    connectionsCheckingInterval: number;
  };
  provider: () => EdgeTlsProvider | undefined;
  request(req: IncomingMessage, res: ServerResponse): void;
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Protocols and ciphers (`--tls-profile`); intermediate when absent. */
  profile?: TlsProfile;
}

/** Idle HTTP/2 sessions are closed after this long. */
const H2_IDLE_MS = 120_000;

/**
 * The HTTPS edge (`--edge-tls-listen`): the TLS profile's protocols and ciphers, the certificate by
 * SNI, ALPN `h2` then `http/1.1`. HTTP/2 requests reach the same handlers as
 * HTTP/1.1 ones (node's compatibility API), with Host taken from
 * `:authority`; WebSocket upgrades come over HTTP/1.1. A client offering
 * `acme-tls/1` is an ACME validator: it is given the challenge certificate
 * and nothing else.
 */
export type EdgeTlsServer = Http2SecureServer & { closeIdleConnections(): void; closeAllConnections(): void };

export function createEdgeTlsServer(opts: EdgeTlsOptions): EdgeTlsServer {
  // OpenSSL asks for the protocol before the certificate, in the same call: the
  // ALPN callback marks the name, the SNI callback that follows picks the challenge.
  let validating: string | undefined;
  const server = createSecureServer(
    {
      allowHTTP1: true,
      ...tlsProfileOptions(opts.profile),
      handshakeTimeout: opts.limits.headersTimeout,
      ...opts.limits,
      // Node offers 2^32-1 streams per session: each one is a request to an agent, so a bound like a browser's.
      settings: { maxHeaderListSize: opts.limits.maxHeaderSize, maxConcurrentStreams: H2_MAX_STREAMS },
      // Counts what each stream is given, for the slow-reader check (shed-slow-h2-streams.ts).
      Http2ServerResponse: CountedH2Response,
      ALPNCallback({ servername, protocols }) {
        if (protocols.includes(ACME_TLS_ALPN)) {
          validating = servername;
          // Only for this ClientHello: both callbacks run within one read of the socket (the ALPN
          // callback drains the tick queue on return, so not nextTick), and a hello that stops
          // between them must not leave the mark for the next client's (one without ALPN).
          setImmediate(() => {
            if (validating === servername) validating = undefined;
          });
          return ACME_TLS_ALPN;
        }
        validating = undefined;
        return protocols.includes('h2') ? 'h2' : protocols.includes('http/1.1') ? 'http/1.1' : undefined;
      },
      SNICallback(servername, cb) {
        const provider = opts.provider();
        const name = servername.toLowerCase();
        if (validating !== undefined && validating === servername) {
          validating = undefined;
          if (!provider) return cb(null, undefined);
          provider.challenge(name).then(
            (ctx) => cb(null, ctx),
            (err: Error) => cb(err, undefined),
          );
          return;
        }
        cb(null, provider?.context(name));
      },
    },
    (req: Http2ServerRequest | IncomingMessage, res: Http2ServerResponse | ServerResponse) => {
      if (req.httpVersionMajor === 2) {
        const authority = (req as Http2ServerRequest).authority;
        if (req.headers.host === undefined && authority) req.headers.host = authority;
        boundH2Request(req as Http2ServerRequest, opts.limits.requestTimeout);
      }
      opts.request(req as IncomingMessage, res as ServerResponse);
    },
  );
  // HTTP/2 sessions are not node:http connections: the drain's last resort destroys every socket.
  const sockets = new Set<Socket>();
  server.on('secureConnection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  // No 'timeout' listener: node then closes an idle session (or HTTP/1.1 socket) itself.
  server.setTimeout(H2_IDLE_MS);
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => opts.upgrade(req, socket, head));
  // The validator only needs the handshake.
  server.on('unknownProtocol', (socket: Socket) => socket.end());
  return Object.assign(server as Http2SecureServer & { closeIdleConnections(): void }, {
    closeAllConnections() {
      for (const socket of sockets) socket.destroy();
    },
  });
}
