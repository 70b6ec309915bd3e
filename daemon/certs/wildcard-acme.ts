import type { DaemonConfig } from '../config.ts';

/**
 * Why ACME orders no certificate for a wildcard name (`*.apps.example.com`) on this daemon, or
 * undefined when it can. HTTP-01 and TLS-ALPN-01 cannot prove a wildcard (RFC 8555 section 7.1.3):
 * only DNS-01 can, through the RFC 2136 updates of `--acme-dns-rfc2136`. The ACME manager marks
 * wildcard names FAILED with it until then (no order sent), and the route detail shows this as the certificate's lastError.
 */
export function wildcardAcmeBlocker(config: Pick<DaemonConfig, 'acme'>): string | undefined {
  if (!config.acme || config.acme.dnsUpdate) return undefined;
  return 'a wildcard certificate needs the ACME DNS-01 challenge: set --acme-dns-rfc2136 server,keyname,secret-file, or upload one (HTTP-01 and TLS-ALPN-01 cannot prove a wildcard)';
}
