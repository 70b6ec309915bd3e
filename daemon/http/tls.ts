import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, type RequestListener, type Server as HttpServer, type ServerOptions } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { createSecureContext } from 'node:tls';
import type { TlsProfile } from '../config/values.ts';
import { tlsProfileOptions } from './tls-profile.ts';

/** The API listener: plain HTTP, or HTTPS with --tls-cert/--tls-key. */
export type ApiServer = HttpServer | HttpsServer;

export interface TlsFiles {
  certFile: string;
  keyFile: string;
}

/** A certificate (chain) and its key, read and checked together. */
export interface TlsPair {
  cert: Buffer;
  key: Buffer;
  leaf: X509Certificate;
}

function read(file: string, flag: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw new Error(`${flag} ${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
}

/**
 * Reads both files and checks them the way a handshake would need them: a
 * PEM certificate, a private key that OpenSSL can use, and the key matching
 * the certificate. Every error names the flag and file at fault.
 */
export function loadTlsPair(files: TlsFiles): TlsPair {
  const cert = read(files.certFile, '--tls-cert');
  const key = read(files.keyFile, '--tls-key');
  let leaf: X509Certificate;
  try {
    leaf = new X509Certificate(cert);
  } catch (err) {
    throw new Error(`--tls-cert ${files.certFile}: not a PEM certificate (${(err as Error).message})`);
  }
  let privateKey;
  try {
    privateKey = createPrivateKey(key);
  } catch (err) {
    throw new Error(`--tls-key ${files.keyFile}: not an unencrypted PEM private key (${(err as Error).message})`);
  }
  if (!leaf.checkPrivateKey(privateKey)) {
    throw new Error(`--tls-key ${files.keyFile} does not match the certificate in --tls-cert ${files.certFile}`);
  }
  try {
    createSecureContext({ cert, key });
  } catch (err) {
    throw new Error(`--tls-cert ${files.certFile}: unusable with its key (${(err as Error).message})`);
  }
  return { cert, key, leaf };
}

/** What the logs say about a certificate: enough to tell an old one from a new one. */
export function describeCertificate(leaf: X509Certificate): Record<string, string> {
  return { subject: leaf.subject.replaceAll('\n', ', '), serial: leaf.serialNumber, notAfter: leaf.validTo, sha256: leaf.fingerprint256 };
}

/**
 * The API server with the given limits and handler, over TLS when a pair is
 * given, with the TLS profile. A TLS handshake gets the same deadline as
 * request headers: a client that stalls before its first request byte is shed either way.
 */
export function createApiServer(
  limits: ServerOptions & { headersTimeout: number },
  handler: RequestListener,
  pair?: TlsPair,
  profile?: TlsProfile,
): ApiServer {
  if (!pair) return createHttpServer(limits, handler);
  return createHttpsServer(
    { ...limits, ...tlsProfileOptions(profile), cert: pair.cert, key: pair.key, handshakeTimeout: limits.headersTimeout },
    handler,
  );
}
