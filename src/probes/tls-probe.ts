import { isIP, connect as netConnect } from 'node:net';
import {
  checkServerIdentity,
  createSecureContext,
  type PeerCertificate,
  type SecureContext,
  connect as tlsConnect,
  type TLSSocket,
} from 'node:tls';
import { connectTiming, timeSocket } from './connection-timing.ts';
import { describeError, TLS_ERROR } from './errors.ts';
import { conclude, type Outcome, type ProtocolProbe } from './protocol-probe.ts';
import { DialogueReader, STARTTLS, StartTlsRefused } from './starttls/index.ts';
import { parseTcpTarget } from './tcp-probe.ts';
import type { CheckTiming, TlsOptions } from './types.ts';

/**
 * One client context per minimum version, made once: tls.connect would otherwise build a context
 * (and parse its options) for every check. No `ca`: Node's default roots, which are Mozilla's
 * bundle plus NODE_EXTRA_CA_CERTS (and the system store when Node is told to use it), as the
 * HTTP checks' undici connections use.
 */
const contexts = new Map<string, SecureContext>();
const contextFor = (minVersion: TlsOptions['minVersion']) =>
  contexts.get(minVersion) ?? contexts.set(minVersion, createSecureContext({ minVersion })).get(minVersion)!;

/** OpenSSL's verification codes as a message says them. */
const REASONS: Record<string, string> = {
  CERT_HAS_EXPIRED: 'the certificate has expired',
  CERT_NOT_YET_VALID: 'the certificate is not yet valid',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'the certificate is self-signed',
  SELF_SIGNED_CERT_IN_CHAIN: 'a self-signed certificate is in the chain',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'the certificate was not issued by a trusted CA',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'the certificate was not issued by a trusted CA',
};

/**
 * A TLS check (docs/API.md#check-types): a TCP connection to `host:port`, the STARTTLS dialogue
 * when `starttls` names one, then the handshake with SNI `sni` or the target's host (none for an
 * IP address), verified unless `skipTLS`. Everything, DNS to the end of the handshake, fits in the
 * check's timeout. Not connected: CONNECTION_ERROR; connected, but STARTTLS refused, the
 * handshake failed or the certificate untrusted for the name: TLS_ERROR with the reason.
 */
export const probeTls: ProtocolProbe<TlsOptions> = (target, options, ctx) => {
  const address = parseTcpTarget(target);
  if (!address)
    return Promise.resolve({ status: 'NOT_AVAILABLE', message: `invalid TLS target "${target}"`, errorCode: 'CONNECTION_ERROR' });
  const { timeoutMs } = ctx;
  const started = performance.now();
  const name = options.sni ?? (isIP(address.host) ? null : address.host);
  return new Promise<Outcome>((resolve) => {
    const plain = netConnect({ host: address.host, port: address.port });
    timeSocket(plain, false);
    let secure: TLSSocket | null = null;
    let connectedAt: number | null = null;
    let identityError: Error | undefined;
    let done = false;
    const timer = setTimeout(() => fail(new Error(`timeout after ${timeoutMs} ms`)), timeoutMs);

    function finish(outcome: Outcome, observation: Parameters<typeof conclude>[2], timing: CheckTiming) {
      if (done) return;
      done = true;
      clearTimeout(timer);
      secure?.destroy();
      plain.destroy();
      resolve(conclude(ctx, { ...outcome, timing }, observation, connectedAt !== null));
    }

    function fail(err: unknown) {
      if (done) return;
      const timing = connectTiming(plain, started);
      const ip = plain.remoteAddress ?? null;
      const responseTimeMs = performance.now() - started;
      const base = { responseTimeMs, ip, connected: connectedAt !== null };
      if (connectedAt === null) {
        finish({ status: 'NOT_AVAILABLE', message: describeError(err, timeoutMs), errorCode: 'CONNECTION_ERROR' }, base, timing);
        return;
      }
      timing.tlsMs = round(performance.now() - connectedAt);
      const phase = secure === null && options.starttls ? `STARTTLS (${options.starttls}) failed` : 'TLS handshake failed';
      const reason = err instanceof StartTlsRefused ? err.message : `${phase}: ${describeError(err, timeoutMs)}`;
      finish({ status: 'NOT_AVAILABLE', message: reason, errorCode: TLS_ERROR }, base, timing);
    }

    function handshake() {
      secure = tlsConnect({
        socket: plain,
        host: address!.host,
        ...(name ? { servername: name } : {}),
        secureContext: contextFor(options.minVersion),
        // Verified below, after the handshake: a certificate that fails still tells its notAfter.
        rejectUnauthorized: false,
        checkServerIdentity: (host: string, cert: PeerCertificate) => (identityError = checkServerIdentity(name ?? host, cert)),
      });
      secure.once('secureConnect', () => handshaken(secure!));
      // on, not once: a second error after the first would otherwise be thrown as unhandled.
      secure.on('error', fail);
    }

    function handshaken(socket: TLSSocket) {
      const now = performance.now();
      const timing = connectTiming(plain, started);
      timing.tlsMs = round(now - connectedAt!);
      const notAfter = Date.parse(socket.getPeerCertificate().valid_to ?? '');
      const certNotAfter = Number.isFinite(notAfter) ? notAfter : undefined;
      const tlsVersion = socket.getProtocol();
      const tlsCipher = socket.getCipher()?.standardName ?? null;
      const observation = {
        connected: true,
        responseTimeMs: now - started,
        ip: plain.remoteAddress ?? null,
        certificateExpiresInMs: certNotAfter === undefined ? null : certNotAfter - Date.now(),
        tlsVersion,
        tlsCipher,
      };
      const untrusted = ctx.skipTLS || socket.authorized ? null : untrustedReason(socket, identityError);
      const outcome: Outcome = untrusted
        ? { status: 'NOT_AVAILABLE', message: untrusted, errorCode: TLS_ERROR }
        : { status: 'AVAILABLE', message: `${tlsVersion} ${tlsCipher ?? ''}`.trim(), errorCode: null };
      finish(certNotAfter === undefined ? outcome : { ...outcome, certNotAfter }, observation, timing);
    }

    plain.on('error', fail);
    plain.once('connect', () => {
      connectedAt = performance.now();
      const dialogue = options.starttls ? STARTTLS[options.starttls] : null;
      if (!dialogue) return handshake();
      const reader = new DialogueReader(plain);
      dialogue(reader)
        .then(() => {
          if (done) return;
          reader.detach();
          handshake();
        })
        .catch(fail);
    });
  });
};

/** Why the certificate is not trusted for the name, in words (the OpenSSL code kept for the unknown ones). */
function untrustedReason(socket: TLSSocket, identityError: Error | undefined): string {
  const code = String(socket.authorizationError ?? 'UNKNOWN');
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') return `certificate not valid for the name: ${identityError?.message ?? code}`;
  return `certificate not trusted: ${REASONS[code] ?? code}`;
}

const round = (ms: number) => Math.round(ms * 10) / 10;
