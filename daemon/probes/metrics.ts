import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { CheckTiming } from '../../src/probes/types.ts';
import { PHASE_LABELS, ResourceGauges } from './resource-gauges.ts';

/**
 * The probe engine's Prometheus metrics. Per-resource series are labelled by
 * id and type only (names change; ids do not), removed with the resource, and
 * kept outside prom-client (resource-gauges.ts: a few typed-array slots each).
 * Every check series carries `location`: `daemon`, or the name of
 * the agent that ran it (agent names never change).
 */
export interface ProbeMetrics {
  /** Status, last duration and (`--metrics-detail all`) last phases per resource and location. */
  resources: ResourceGauges;
  duration: Histogram<'type' | 'location'>;
  /** Each phase of each check (docs/DECISIONS.md#check-timing); no series per resource. */
  phases: Histogram<'phase' | 'type' | 'location'>;
  checks: Counter<'type' | 'status' | 'location'>;
  failures: Counter<'type' | 'location'>;
  lag: Histogram<'location'>;
  inFlight: Gauge;
  scheduled: Gauge;
  forget(id: number, locations: readonly string[]): void;
}

const STATUS_VALUE = { AVAILABLE: 1, NOT_AVAILABLE: 0, UNKNOWN: -1 } as const;
export function statusValue(status: keyof typeof STATUS_VALUE): number {
  return STATUS_VALUE[status];
}

export function createProbeMetrics(registry: Registry, opts: { perResourcePhases?: boolean } = {}): ProbeMetrics {
  const registers = [registry];
  const duration = new Histogram({
    name: 'monctl_check_duration_seconds',
    registers,
    labelNames: ['type', 'location'] as const,
    help: 'Duration of checks, by resource type and location',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30],
  });
  const phases = new Histogram({
    name: 'monctl_check_phase_seconds',
    registers,
    labelNames: ['phase', 'type', 'location'] as const,
    help: 'Duration of each phase of checks (dns, connect, tls, first_byte, total), by resource type and location; a phase that did not happen (a pooled connection, plain HTTP) is not observed',
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  });
  const checks = new Counter({
    name: 'monctl_checks_total',
    registers,
    labelNames: ['type', 'status', 'location'] as const,
    help: 'Checks run, by resource type, result status and location',
  });
  const failures = new Counter({
    name: 'monctl_check_failures_total',
    registers,
    labelNames: ['type', 'location'] as const,
    help: 'Checks whose result was not AVAILABLE, by resource type and location',
  });
  const lag = new Histogram({
    name: 'monctl_scheduler_lag_seconds',
    registers,
    labelNames: ['location'] as const,
    help: "Delay between when a scheduled check was due and when it started, by location (an agent's includes the wait in its queue)",
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  });
  const inFlight = new Gauge({
    name: 'monctl_checks_in_flight',
    registers,
    help: "Checks running now (the daemon's own; agents' are in the topology)",
  });
  const scheduled = new Gauge({ name: 'monctl_scheduled_resources', registers, help: 'Active resources in the scheduler' });
  const resources = new ResourceGauges(opts.perResourcePhases ?? false);
  return {
    resources,
    duration,
    phases,
    checks,
    failures,
    lag,
    inFlight,
    scheduled,
    forget(id, locations) {
      resources.forget(id, locations);
    },
  };
}

/**
 * Observes the phases a check timed in the histogram; a null phase did not happen and is left
 * out, so it does not pull the quantiles to 0. (The per-resource last phases: ResourceGauges.)
 */
export function observePhases(
  metrics: Pick<ProbeMetrics, 'phases'>,
  labels: { type: string; location: string },
  timing: CheckTiming | undefined,
): void {
  if (!timing) return;
  for (const [phase, key] of PHASE_LABELS) {
    const ms = timing[key];
    if (ms !== null && Number.isFinite(ms)) metrics.phases.observe({ phase, ...labels }, Math.max(0, ms) / 1000);
  }
}
