import { collectDefaultMetrics, Histogram, Registry } from 'prom-client';

/**
 * The daemon's Prometheus registry. Capabilities register their own metrics on
 * `registry`; names follow Prometheus conventions (`monctl_` prefix, base
 * units, `_total` for counters).
 */
export interface Metrics {
  registry: Registry;
  httpDuration: Histogram<'method' | 'route' | 'status'>;
  /**
   * Series rendered at scrape time, after the registry's: the per-resource gauges live in typed
   * arrays (daemon/probes/resource-gauges.ts), not as one prom-client series each. Each gives
   * its text in chunks of whole lines.
   */
  rendered: Array<() => Iterable<string>>;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  // prom-client names three gauges `_total`, which promtool rejects (only counters
  // end in _total). Their per-type siblings (`nodejs_active_handles{type}`, …) stay:
  // `sum()` of those gives the same number.
  for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) {
    registry.removeSingleMetric(name);
  }
  const httpDuration = new Histogram({
    name: 'monctl_http_request_duration_seconds',
    help: 'Duration of HTTP requests to the API, by method, route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  return { registry, httpDuration, rendered: [] };
}
