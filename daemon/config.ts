import type { ProbeConfig } from './probes/config.ts';

/** The daemon's settings after flags and `MONCTL_*` env vars are resolved (CONTRACT section 1). */
export interface DaemonConfig {
  listen: { host: string; port: number };
  edgeListen: { host: string; port: number };
  dataDir: string;
  logLevel: string;
  /** Milliseconds between SSE `: ping` comments. */
  sseHeartbeatMs: number;
  /** Validate every response against its schema (tests turn it on). */
  checkResponses: boolean;
  /** Probe engine tunables (daemon/probes/config.ts); defaults when absent. */
  probes?: ProbeConfig;
  /** PEM files of the API listener's certificate (chain) and key: HTTPS when set (daemon/http/tls.ts). */
  tls?: { certFile: string; keyFile: string };
}

/** `HOST:PORT`, `[v6]:PORT` or `:PORT`; throws with a readable message. */
export function parseHostPort(text: string, flag: string): { host: string; port: number } {
  const match = /^(?:\[([^\]]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(text.trim());
  const port = match ? Number(match[3]) : NaN;
  if (!match || port > 65535) throw new Error(`${flag} must be HOST:PORT (got "${text}")`);
  return { host: match[1] ?? (match[2] || '0.0.0.0'), port };
}
