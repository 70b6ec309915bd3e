import type { Topology } from '../../src/api/schemas/tunnel.ts';
import { LEASE_MS } from '../cluster/shard-leases.ts';
import type { DaemonContext } from '../context.ts';
import { liveLoads } from '../store/dialect/postgres-leases.ts';
import { serveStream } from '../events/sse.ts';
import type { Handlers } from '../http/bind.ts';
import { toAgent, toPod, toRoute } from './mappers.ts';
import { loadPools, poolOf } from './route-pool.ts';
import { loadHealth, membersOf } from './route-pool-view.ts';
import { POD_STALE_MS } from './pods.ts';
import { TOPOLOGY_CHANNEL } from '../../src/api/schemas/tunnel.ts';

/**
 * Pods that are running (not stopped, heard from recently), every agent, every
 * route with its requests in flight, and the edges: pod–agent for live
 * sessions, agent–route for the routes an agent serves. Each pod carries its
 * load: on PostgreSQL as its last heartbeat said (and a pod whose heartbeat
 * stopped is gone within a lease), this daemon's own as it is now.
 */
export async function buildTopology(ctx: DaemonContext): Promise<Topology> {
  const [allPods, agentRows, routeRows, loads, own, pools, health] = await Promise.all([
    ctx.db
      .selectFrom('pods')
      .selectAll()
      .where('stopped_at', 'is', null)
      .where('last_seen_at', '>', Date.now() - POD_STALE_MS)
      .orderBy('id')
      .execute(),
    ctx.db.selectFrom('agents').selectAll().orderBy('id').execute(),
    ctx.db.selectFrom('routes').selectAll().orderBy('id').execute(),
    ctx.cluster ? liveLoads(ctx.db, LEASE_MS) : undefined,
    ownLoad(ctx),
    loadPools(ctx.db),
    loadHealth(ctx),
  ]);
  const self = ctx.pod.name;
  // Pods: the live members (heartbeat within a lease); none at all when the pods run no scheduler (--scheduler off).
  const podRows = loads?.size ? allPods.filter((p) => p.name === self || loads.has(p.name)) : allPods;
  const edges: Topology['edges'] = [];
  const podIds = new Set(podRows.map((p) => Number(p.id)));
  for (const agent of agentRows) {
    if (agent.status === 'CONNECTED' && agent.pod_id !== null && podIds.has(Number(agent.pod_id))) {
      edges.push({ from: `pod:${agent.pod_id}`, to: `agent:${agent.id}`, kind: 'CONNECTION' });
    }
  }
  // Every agent of a route's pool serves it.
  for (const route of routeRows) {
    for (const a of poolOf(route, pools.get(Number(route.id))).agents)
      edges.push({ from: `agent:${a.agentId}`, to: `route:${route.id}`, kind: 'SERVES' });
  }
  const agentStates = new Map(agentRows.map((a) => [Number(a.id), a]));
  const sessions = new Map<string, number>();
  for (const e of edges) sessions.set(e.from, (sessions.get(e.from) ?? 0) + 1);
  return {
    pods: podRows.map((row) => {
      const theirs =
        row.name === self
          ? { ...own, shards: loads?.get(self)?.shards ?? null }
          : { ...(loads?.get(row.name) ?? { shards: null, resources: 0, checksTotal: 0 }) };
      return { ...toPod(row), load: { ...theirs, agents: sessions.get(`pod:${row.id}`) ?? 0 } };
    }),
    agents: agentRows.map(toAgent),
    routes: routeRows.map((row) => {
      const id = Number(row.id);
      const agents = pools.get(id);
      const pool = membersOf(poolOf(row, agents), agentStates, health.get(id) ?? new Map(), ctx.tunnel.poolStats(id));
      return { ...toRoute(row, agents), pool, inFlight: Math.max(0, ctx.tunnel.inFlight(id) | 0) };
    }),
    edges,
    probes: agentRows.map((row) => ctx.tunnel.probeLoad(Number(row.id))),
  };
}

/** This daemon's scheduled resources and checks run, from its metrics. */
async function ownLoad(ctx: DaemonContext): Promise<{ resources: number; checksTotal: number }> {
  const registry = ctx.metrics.registry;
  const sum = async (name: string) => {
    const metric = registry.getSingleMetric(name);
    return metric ? (await metric.get()).values.reduce((n, v) => n + v.value, 0) : 0;
  };
  return { resources: await sum('monctl_scheduled_resources'), checksTotal: await sum('monctl_checks_total') };
}

export const topologyHandlers: Handlers = {
  getTopology: ({ ctx }) => buildTopology(ctx),

  async topologyEvents({ ctx, req, res }) {
    await serveStream(req, res, ctx.events.channel(TOPOLOGY_CHANNEL), {
      snapshot: () => buildTopology(ctx),
      heartbeatMs: ctx.config.sseHeartbeatMs,
      maxQueuedBytes: ctx.config.sseMaxQueuedBytes,
    });
  },
};
