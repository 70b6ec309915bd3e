import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { CheckTiming } from '../../src/probes/types.ts';

/**
 * The probe engine's Prometheus metrics. Per-resource series are labelled by
 * id and type only (names change; ids do not) and removed with the resource.
 * Every check series carries `location`: `daemon`, or the name of
 * the agent that ran it (agent names never change).
 */
export interface ProbeMetrics {
  status: Gauge<'resource_id' | 'type' | 'location'>;
  lastDuration: Gauge<'resource_id' | 'type' | 'location'>;
  duration: Histogram<'type' | 'location'>;
  /** Each phase of each check (docs/DECISIONS.md#check-timing); no series per resource. */
  phases: Histogram<'phase' | 'type' | 'location'>;
  /** The latest check's phases per resource: only with `--metrics-detail all`. */
  lastPhases: Gauge<'resource_id' | 'type' | 'location' | 'phase'> | undefined;
  checks: Counter<'type' | 'status' | 'location'>;
  failures: Counter<'type' | 'location'>;
  lag: Histogram<'location'>;
  inFlight: Gauge;
  scheduled: Gauge;
  forget(id: number, type: string, locations: readonly string[]): void;
}

const STATUS_VALUE = { AVAILABLE: 1, NOT_AVAILABLE: 0, UNKNOWN: -1 } as const;
export function statusValue(status: keyof typeof STATUS_VALUE): number {
  return STATUS_VALUE[status];
}

export function createProbeMetrics(registry: Registry, opts: { perResourcePhases?: boolean } = {}): ProbeMetrics {
  const registers = [registry];
  const status = new Gauge({
    name: 'monctl_resource_status',
    registers,
    labelNames: ['resource_id', 'type', 'location'] as const,
    help: 'Result of the last check of a resource at a location: 1 available, 0 not available, -1 unknown (or the location could not check)',
  });
  const lastDuration = new Gauge({
    name: 'monctl_resource_last_check_duration_seconds',
    registers,
    labelNames: ['resource_id', 'type', 'location'] as const,
    help: 'Duration of the last check of a resource at a location',
  });
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
  const lastPhases = opts.perResourcePhases
    ? new Gauge({
        name: 'monctl_resource_last_check_phase_seconds',
        registers,
        labelNames: ['resource_id', 'type', 'location', 'phase'] as const,
        help: 'Phases of the last check of a resource at a location (--metrics-detail all only); a phase that did not happen is absent',
      })
    : undefined;
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
  return {
    status,
    lastDuration,
    duration,
    phases,
    lastPhases,
    checks,
    failures,
    lag,
    inFlight,
    scheduled,
    forget(id, type, locations) {
      for (const location of locations) {
        const labels = { resource_id: String(id), type, location };
        status.remove(labels);
        lastDuration.remove(labels);
        if (lastPhases) for (const [phase] of PHASE_LABELS) lastPhases.remove({ ...labels, phase });
      }
    },
  };
}

const PHASE_LABELS = [
  ['dns', 'dnsMs'],
  ['connect', 'connectMs'],
  ['tls', 'tlsMs'],
  ['first_byte', 'firstByteMs'],
  ['total', 'totalMs'],
] as const;

/**
 * Observes the phases a check timed; a null phase did not happen and is left out, so it does not
 * pull the quantiles to 0. `resourceId`: also the per-resource gauge, when there is one.
 */
export function observePhases(
  metrics: Pick<ProbeMetrics, 'phases' | 'lastPhases'>,
  labels: { type: string; location: string },
  timing: CheckTiming | undefined,
  resourceId?: number,
): void {
  if (!timing) return;
  for (const [phase, key] of PHASE_LABELS) {
    const ms = timing[key];
    const one = resourceId === undefined || !metrics.lastPhases ? undefined : { resource_id: String(resourceId), ...labels, phase };
    if (ms === null || !Number.isFinite(ms)) {
      if (one) metrics.lastPhases!.remove(one); // this check had no such phase: its last value is not current
      continue;
    }
    metrics.phases.observe({ phase, ...labels }, Math.max(0, ms) / 1000);
    if (one) metrics.lastPhases!.set(one, Math.max(0, ms) / 1000);
  }
}
