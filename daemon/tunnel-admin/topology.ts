import type { Topology } from '../../src/api/schemas/tunnel.ts';
import type { DaemonContext } from '../context.ts';
import { serveStream } from '../events/sse.ts';
import type { Handlers } from '../http/bind.ts';
import { toAgent, toPod, toRoute } from './mappers.ts';
import { POD_STALE_MS } from './pods.ts';
import { TOPOLOGY_CHANNEL } from './topology-events.ts';

/**
 * Pods that are running (not stopped, heard from recently), every agent, every
 * route with its requests in flight, and the edges: pod–agent for live
 * sessions, agent–route for the routes an agent serves.
 */
export async function buildTopology(ctx: DaemonContext): Promise<Topology> {
  const [podRows, agentRows, routeRows] = await Promise.all([
    ctx.db.selectFrom('pods').selectAll().where('stopped_at', 'is', null)
      .where('last_seen_at', '>', Date.now() - POD_STALE_MS).orderBy('id').execute(),
    ctx.db.selectFrom('agents').selectAll().orderBy('id').execute(),
    ctx.db.selectFrom('routes').selectAll().orderBy('id').execute(),
  ]);
  const edges: Topology['edges'] = [];
  const podIds = new Set(podRows.map((p) => Number(p.id)));
  for (const agent of agentRows) {
    if (agent.status === 'CONNECTED' && agent.pod_id !== null && podIds.has(Number(agent.pod_id))) {
      edges.push({ from: `pod:${agent.pod_id}`, to: `agent:${agent.id}`, kind: 'CONNECTION' });
    }
  }
  for (const route of routeRows) edges.push({ from: `agent:${route.agent_id}`, to: `route:${route.id}`, kind: 'SERVES' });
  return {
    pods: podRows.map(toPod),
    agents: agentRows.map(toAgent),
    routes: routeRows.map((row) => ({ ...toRoute(row), inFlight: Math.max(0, ctx.tunnel.inFlight(Number(row.id)) | 0) })),
    edges,
    probes: agentRows.map((row) => ctx.tunnel.probeLoad(Number(row.id))),
  };
}

export const topologyHandlers: Handlers = {
  getTopology: ({ ctx }) => buildTopology(ctx),

  async topologyEvents({ ctx, req, res }) {
    await serveStream(req, res, ctx.events.channel(TOPOLOGY_CHANNEL), {
      snapshot: () => buildTopology(ctx),
      heartbeatMs: ctx.config.sseHeartbeatMs, maxQueuedBytes: ctx.config.sseMaxQueuedBytes,
    });
  },
};
