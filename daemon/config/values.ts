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
