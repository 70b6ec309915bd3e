import { acceptRelay } from './relay-accept.ts';
import { PodRelay } from './tunnel-relay.ts';
import type { DaemonContext } from '../context.ts';
import type { DaemonModule } from '../module.ts';
import type { TunnelControl } from '../tunnel-control.ts';
import { EdgeGate } from './access/gate.ts';
import { setTrustedProxies } from '../http/client-ip.ts';
import type { EdgeDeps } from './edge-deps.ts';
import { forwardHttp } from './edge-http.ts';
import { forwardUpgrade } from './edge-upgrade.ts';
import { Observer, type PoolCounting } from './observe.ts';
import { explainMatch } from './explain.ts';
import { PoolBalancer } from './pool/balancer.ts';
import { PoolHealthState } from './pool/health-state.ts';
import { RemoteAgents } from './pool/remote-agents.ts';
import { Rotation } from './pool/rotation.ts';
import { targetHealth } from './health/index.ts';
import { RouteTable } from './route-table.ts';
import { AgentProbes } from './remote-probes.ts';
import { AgentSessions } from './sessions.ts';
import { TcpListeners } from './tcp-listeners.ts';

/** How long in-flight tunnel streams may run on during shutdown before they are cut. */
const DRAIN_GRACE_MS = 5_000;

/**
 * The tunnel data plane: agent sessions on `GET /admin/tunnel`, the edge
 * router for HTTP and WebSocket routes, TCP listeners, and the reporting
 * (access log, topology events, metrics) of every exchange.
 */
export function tunnelModule(ctx: DaemonContext): DaemonModule {
  // Pools (docs/API.md#agent-pools): the health verdicts the balancer steers by, and where agents are.
  const health = new PoolHealthState();
  const counters: PoolCounting = {
    acquire: (routeId, agentId) => balancer.acquire(routeId, agentId),
    release: (routeId, agentId) => balancer.release(routeId, agentId),
  };
  const observer = new Observer(ctx, counters);
  const sessions = new AgentSessions(
    ctx,
    () => observer.podId() ?? 0,
    (n) => observer.agents.set(n),
  );
  // Pods: an agent connected to another pod is reached through it (tunnel/tunnel-relay.ts).
  const relay = ctx.cluster ? new PodRelay(ctx) : undefined;
  const remote = ctx.cluster ? new RemoteAgents(ctx) : undefined;
  const balancer = new PoolBalancer(new Rotation(sessions, health, remote));
  // One gate (one rate limiter, one bounded table of buckets) for HTTP requests and TCP connections.
  const gate = new EdgeGate(
    ctx,
    (routeId, reason) => observer.refused(routeId, reason),
    (host) => table.ruleOf(host)?.routes ?? [],
  );
  const tcp = new TcpListeners(ctx, sessions, observer, gate, balancer, relay, remote);
  const probes = new AgentProbes(ctx, sessions, relay);
  const table = new RouteTable(ctx, (routes) => tcp.sync(routes));
  // Target health checks (docs/DECISIONS.md#target-health-checks) set the verdicts the balancer steers by.
  const checks = targetHealth(ctx, sessions, probes, health);
  setTrustedProxies(ctx.config.trustedProxies);
  const deps: EdgeDeps = { ctx, table, sessions, observer, gate, balancer, relay, remote };
  const onError = (err: unknown) => ctx.log.error({ err }, 'tunnel: edge request failed');

  const control: TunnelControl = {
    inFlight: (routeId) => observer.inFlight(routeId),
    disconnectAgent: (agentId, reason) => sessions.disconnect(agentId, reason),
    routesChanged: () => {
      void table.reload();
      void checks.sync();
      ctx.bus.emit('routes.changed');
    },
    probeAgent: (agentId, name, check) => probes.probe(agentId, name, check),
    probeLoad: (agentId) => probes.load(agentId),
    poolStats: (routeId) => balancer.stats(routeId),
    matchRoute: (host, path, clientIp) => explainMatch(ctx, table, balancer, host, path, clientIp),
  };
  ctx.tunnel = control;
  // Load now (the database is open): the edge is served from the first request on.
  const loaded = table.reload();
  ctx.cluster?.onTables(['routes'], () => Promise.all([table.reload(), checks.sync()])); // routes changed through another pod
  // Status page hostnames (here or through another pod) are exact names that wildcards do not serve.
  ctx.bus.on('status-pages.changed', () => void table.reload());

  let drained: Promise<void> | undefined;
  const drain = () => {
    drained ??= (async () => {
      checks.close();
      probes.close();
      remote?.close();
      relay?.close();
      tcp.closeAll();
      await sessions.closeAll(DRAIN_GRACE_MS);
    })();
    return drained;
  };

  return {
    name: 'tunnel',
    upgrade: (req, socket, head) =>
      (relay !== undefined && acceptRelay(ctx, sessions, probes, req, socket, head)) || sessions.upgrade(req, socket, head),
    edge: {
      request: (req, res) => {
        try {
          forwardHttp(deps, req, res)?.catch(onError);
        } catch (err) {
          onError(err);
        }
      },
      upgrade: (req, socket, head) => void forwardUpgrade(deps, req, socket, head).catch(onError),
    },
    // Pods: where the other pods' agents are, known before the first request (else it waits for a read).
    start: () => Promise.all([loaded, remote?.refresh(), checks.start()]).then(() => {}),
    drain,
    stop: drain,
  };
}
