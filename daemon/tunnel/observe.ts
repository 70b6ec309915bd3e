import { Counter, Gauge, Histogram } from 'prom-client';
import type { DaemonContext } from '../context.ts';
import { publishTopology } from '../tunnel-admin/agent-status.ts';
import type { LiveRoute } from './route-table.ts';
import { type ExchangeInfo, ObservedExchange, type Exchange, type PoolCounting } from './exchange-record.ts';

export type { Exchange, ExchangeInfo, PoolCounting };

interface RouteSeries {
  route: string;
  /** requests_total children by status ('none' for null): prom-client hashes label objects on every inc otherwise. */
  byStatus: Map<number | null, { inc(): void }>;
  received: { inc(n: number): void };
  sent: { inc(n: number): void };
  duration: { observe(n: number): void };
}

/**
 * Everything the data plane reports per exchange: in-flight counts per route
 * (topology), access-log entries, topology events and Prometheus metrics.
 */
export class Observer {
  readonly #ctx: DaemonContext;
  readonly #inFlight = new Map<number, number>();
  readonly #byRoute = new Map<number, RouteSeries>();
  readonly #requests: Counter<'route' | 'status'>;
  readonly #received: Counter<'route'>;
  readonly #sent: Counter<'route'>;
  readonly #duration: Histogram<'route'>;
  readonly #refused: Counter<'route' | 'reason'>;
  readonly agents: Gauge;
  /** Counts exchanges per pool agent (pool/counters.ts): told of each exchange that goes through an agent. */
  readonly #pool: PoolCounting | undefined;

  constructor(ctx: DaemonContext, pool?: PoolCounting) {
    this.#ctx = ctx;
    this.#pool = pool;
    const registers = [ctx.metrics.registry];
    this.agents = new Gauge({ name: 'monctl_tunnel_agents_connected', help: 'Agents connected to this daemon', registers });
    this.#requests = new Counter({
      name: 'monctl_tunnel_requests_total',
      help: 'Requests and TCP connections through each route, by final status (none for TCP or aborted)',
      labelNames: ['route', 'status'] as const,
      registers,
    });
    this.#received = new Counter({
      name: 'monctl_tunnel_received_bytes_total',
      help: 'Body bytes received from clients, per route',
      labelNames: ['route'] as const,
      registers,
    });
    this.#sent = new Counter({
      name: 'monctl_tunnel_sent_bytes_total',
      help: 'Body bytes sent to clients, per route',
      labelNames: ['route'] as const,
      registers,
    });
    const inFlight = this.#inFlight;
    const byRoute = this.#byRoute;
    // Read at scrape time rather than set twice per request: every route seen so far, 0 when idle.
    new Gauge({
      // registers itself; read at scrape time
      name: 'monctl_tunnel_requests_in_flight',
      help: 'Requests and TCP connections in flight, per route',
      labelNames: ['route'] as const,
      registers,
      collect() {
        for (const [routeId, series] of byRoute) this.set({ route: series.route }, inFlight.get(routeId) ?? 0);
      },
    });
    this.#duration = new Histogram({
      name: 'monctl_tunnel_request_duration_seconds',
      help: 'Duration of requests and TCP connections through each route',
      labelNames: ['route'] as const,
      registers,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    });
    this.#refused = new Counter({
      name: 'monctl_tunnel_access_refused_total',
      help: "Requests and TCP connections refused by a route's access control, by reason (ip_denied, ip_not_allowed, rate_limited, unauthorized, forbidden, auth_busy, sign_in_required, sso_forbidden)",
      labelNames: ['route', 'reason'] as const,
      registers,
    });
  }

  /** One refusal by a route's access control (daemon/tunnel/access/gate.ts); its log entry is written by begin/finish as for any exchange. */
  refused(routeId: number, reason: string): void {
    this.#refused.inc({ route: String(routeId), reason: reason.replaceAll('-', '_') }); // label values as the other reason counters spell them
  }

  inFlight(routeId: number): number {
    return this.#inFlight.get(routeId) ?? 0;
  }

  podId(): number | null {
    try {
      return this.#ctx.pod.id;
    } catch {
      return null;
    }
  }

  /** Label children per route: prom-client hashes the labels once instead of on every request. */
  #series(routeId: number): RouteSeries {
    let series = this.#byRoute.get(routeId);
    if (!series) {
      const route = String(routeId);
      series = {
        route,
        byStatus: new Map(),
        received: this.#received.labels({ route }),
        sent: this.#sent.labels({ route }),
        duration: this.#duration.labels({ route }),
      };
      this.#byRoute.set(routeId, series);
    }
    return series;
  }

  #count(routeId: number, delta: number): number {
    const n = Math.max(0, (this.#inFlight.get(routeId) ?? 0) + delta);
    if (n) this.#inFlight.set(routeId, n);
    else this.#inFlight.delete(routeId);
    this.#series(routeId);
    return n;
  }

  /**
   * An exchange starts. `agentId`: the pool agent it goes through (counted per agent); left out for an
   * answer of the edge itself (a refusal, no agent), logged under the pool's first agent.
   */
  begin(route: LiveRoute, info: ExchangeInfo, agentId?: number): Exchange {
    const pool = agentId === undefined ? undefined : this.#pool;
    const through = agentId ?? route.agentId;
    pool?.acquire(route.id, through);
    const exchange = new ObservedExchange(this, route.id, info, through, pool);
    const inFlight = this.#count(route.id, 1);
    publishTopology(this.#ctx, 'REQUEST_IN_FLIGHT', {
      routeId: route.id,
      agentId: through,
      requestId: exchange.requestId,
      method: info.method,
      path: info.path,
      inFlight,
    });
    return exchange;
  }

  /** Records an exchange's outcome: metrics, REQUEST_COMPLETED, the access log. */
  completed(exchange: ObservedExchange, status: number | null, error: string | undefined): void {
    const seconds = Number(process.hrtime.bigint() - exchange.started) / 1e9;
    const durationMs = Math.round(seconds * 1000);
    const { routeId, agentId, requestId, info } = exchange;
    const left = this.#count(routeId, -1);
    const series = this.#series(routeId);
    let requests = series.byStatus.get(status);
    if (!requests) {
      requests = this.#requests.labels({ route: series.route, status: status === null ? 'none' : String(status) });
      series.byStatus.set(status, requests);
    }
    requests.inc();
    series.received.inc(exchange.bytesIn);
    series.sent.inc(exchange.bytesOut);
    series.duration.observe(seconds);
    publishTopology(this.#ctx, 'REQUEST_COMPLETED', { routeId, agentId, requestId, status, durationMs, inFlight: left });
    this.#ctx.routeLog.append({
      routeId,
      at: exchange.at,
      method: info.method,
      path: info.path,
      status,
      durationMs,
      bytesIn: exchange.bytesIn,
      bytesOut: exchange.bytesOut,
      clientIp: info.clientIp,
      agentId,
      podId: this.podId(),
      error: error ?? null,
    });
  }
}
