/**
 * Defaults and choices of settings whose code lives in a capability: declared
 * here, under the settings table (settings.ts), so that reading the settings
 * loads no capability and the capabilities import config, never the reverse.
 */

/** `--tls-profile`: Mozilla's server-side TLS recommendations (v5.7). */
export const TLS_PROFILES = ['intermediate', 'modern'] as const;
export type TlsProfile = (typeof TLS_PROFILES)[number];

/** Defaults of --tunnel-max-refusals and --tunnel-refusal-window. */
export const DIAL_LIMIT_DEFAULTS = { maxRefusals: 10, windowMs: 60_000 };

/**
 * Defaults of --status-streams-max, --status-streams-per-client and
 * --status-streams-per-connection. A client is an IPv4 address or an IPv6 /64:
 * 100 of them, each at its cap, fill the global bound. An office behind one
 * NAT address shares 100 streams; a browser opens one per tab, and shares one
 * HTTP/2 connection between the tabs of an origin.
 */
export const STATUS_STREAM_LIMITS = { max: 5_000, perClient: 100, perConnection: 32 };

export type StreamLimits = typeof STATUS_STREAM_LIMITS;

/** `--acme-challenges`: the ACME challenge types the daemon answers. */
export const ACME_CHALLENGE_TYPES = ['http-01', 'tls-alpn-01', 'dns-01'] as const;
export type AcmeChallengeType = (typeof ACME_CHALLENGE_TYPES)[number];

/** TSIG algorithms of `--acme-dns-rfc2136` key files (RFC 8945 §6) by their DNS names, with node's hash for each. */
export const TSIG_ALGORITHMS = {
  'hmac-sha256': 'sha256',
  'hmac-sha384': 'sha384',
  'hmac-sha512': 'sha512',
  'hmac-sha224': 'sha224',
  'hmac-sha1': 'sha1',
} as const;
export type TsigAlgorithm = keyof typeof TSIG_ALGORITHMS;

/** The RFC 2136 server and TSIG key of ACME DNS-01 (`--acme-dns-rfc2136`), its secret read at start. */
export interface AcmeDnsUpdate {
  server: { host: string; port: number };
  keyName: string;
  algorithm: TsigAlgorithm;
  secret: Buffer;
}
