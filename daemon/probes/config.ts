/**
 * Tunables of the probe engine. Defaults suit production; tests and benches
 * lower them through `MONCTL_*` env vars (read once at start).
 */
export interface ProbeConfig {
  /** Whole-check timeout of an HTTP or DOCKER request, and of a TCP connect. */
  httpTimeoutMs: number;
  /** Checks running at once, all resources together. */
  concurrency: number;
  /** Checks running at once against one host (host:port). */
  perHostConcurrency: number;
  /** Raw check history older than this is deleted (rollups keep the summary). */
  historyRetentionDays: number;
  /** Set to false to run the daemon without the scheduler (the on-demand check still works). */
  schedulerEnabled: boolean;
}

export function defaultProbeConfig(): ProbeConfig {
  return { httpTimeoutMs: 15_000, concurrency: 256, perHostConcurrency: 32, historyRetentionDays: 30, schedulerEnabled: true };
}

function positive(name: string, fallback: number): number {
  const value = Number(process.env[name]);
  return Number.isFinite(value) && value > 0 ? value : fallback;
}

/** Reads `MONCTL_HTTP_TIMEOUT_MS`, `MONCTL_PROBE_CONCURRENCY`, `MONCTL_PROBE_PER_HOST`, `MONCTL_HISTORY_RETENTION_DAYS`, `MONCTL_SCHEDULER`. */
export function probeConfigFromEnv(): ProbeConfig {
  const d = defaultProbeConfig();
  return {
    httpTimeoutMs: positive('MONCTL_HTTP_TIMEOUT_MS', d.httpTimeoutMs),
    concurrency: Math.floor(positive('MONCTL_PROBE_CONCURRENCY', d.concurrency)),
    perHostConcurrency: Math.floor(positive('MONCTL_PROBE_PER_HOST', d.perHostConcurrency)),
    historyRetentionDays: positive('MONCTL_HISTORY_RETENTION_DAYS', d.historyRetentionDays),
    schedulerEnabled: process.env.MONCTL_SCHEDULER !== 'off',
  };
}
