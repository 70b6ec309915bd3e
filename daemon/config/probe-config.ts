import { DEFAULT_MAX_BODY_BYTES } from '../../src/probes/read-body.ts';

/**
 * Tunables of the probe engine. Defaults suit production; tests and benches
 * lower them through the daemon's settings (daemon/config/settings.ts: flags,
 * `MONCTL_HTTP_TIMEOUT`, `MONCTL_PROBE_CONCURRENCY`, … or the config file).
 */
export interface ProbeConfig {
  /** Whole-check timeout of an HTTP or DOCKER request, and of a TCP connect. */
  httpTimeoutMs: number;
  /** Most bytes of a response body read, after decoding, for a `[BODY]` condition. */
  maxBodyBytes: number;
  /** Checks running at once, all resources together. */
  concurrency: number;
  /** Checks running at once against one host (host:port). */
  perHostConcurrency: number;
  /** Raw check history older than this is deleted (rollups keep the summary). */
  historyRetentionDays: number;
  /** Past this size, raw history older than the newest checks keeps its state changes only (rollups stay). */
  historyMaxBytes: number;
  /** Set to false to run the daemon without the scheduler (the on-demand check still works). */
  schedulerEnabled: boolean;
}

export function defaultProbeConfig(): ProbeConfig {
  return {
    httpTimeoutMs: 15_000,
    maxBodyBytes: DEFAULT_MAX_BODY_BYTES,
    concurrency: 256,
    perHostConcurrency: 32,
    historyRetentionDays: 30,
    historyMaxBytes: 10 * 2 ** 30,
    schedulerEnabled: true,
  };
}
