import { TOPOLOGY_CHANNEL, type TopologyEventData } from '../../../src/api/schemas/tunnel.ts';
import type { DaemonContext } from '../../context.ts';
import type { HubEvent } from '../../events/channel.ts';
import { CoalescedReload } from '../../util/coalesced.ts';
import type { PoolHealthState } from '../pool/health-state.ts';
import type { AgentProbes } from '../remote-probes.ts';
import type { AgentSessions } from '../sessions.ts';
import { HealthChecks } from './checks.ts';
import { verdictOf } from './streak.ts';
import { loadVerdicts } from './verdict-store.ts';

export interface TargetHealth {
  /** Starts checking (the database is open). */
  start(): Promise<void>;
  /** The routes changed (here or through another pod). */
  sync(): Promise<void>;
  close(): void;
}

/**
 * Target health checks (docs/DECISIONS.md#target-health-checks): this pod checks the agents whose
 * sessions it holds (health/checks.ts) and steers by the verdicts of the others as their pods
 * announce them (ROUTE_HEALTH on the cluster-wide topology channel), read from `route_agent_health`
 * at start and whenever events may have been missed. An agent that disconnects anywhere loses its
 * verdict everywhere: it is checked again where it reconnects.
 */
export function targetHealth(ctx: DaemonContext, sessions: AgentSessions, probes: AgentProbes, state: PoolHealthState): TargetHealth {
  const held = (agentId: number) => sessions.get(agentId) !== undefined;
  const checks = new HealthChecks(ctx, held, (id, name, check) => probes.probe(id, name, check), state);
  const others = new CoalescedReload(async () => {
    for (const v of await loadVerdicts(ctx.db)) if (!held(v.agentId)) state.set(v.routeId, v.agentId, v.healthy);
  });
  const readOthers = () =>
    others.run().catch((err) => {
      if (!ctx.draining) ctx.log.warn({ err }, 'tunnel: reading the health verdicts of other pods failed');
    });
  const channel = ctx.events.channel(TOPOLOGY_CHANNEL);
  const onEvent = (event: HubEvent) => {
    if (event.kind === 'ROUTE_HEALTH') {
      const d = event.data as TopologyEventData<'ROUTE_HEALTH'>;
      if (!held(d.agentId)) state.set(d.routeId, d.agentId, verdictOf(d.health));
    } else if (event.kind === 'AGENT_CONNECTED') {
      const { agent } = event.data as TopologyEventData<'AGENT_CONNECTED'>;
      if (held(agent.id)) checks.connected(agent.id);
    } else if (event.kind === 'AGENT_DISCONNECTED') {
      const { agent } = event.data as TopologyEventData<'AGENT_DISCONNECTED'>;
      if (held(agent.id)) return; // a newer session here took over
      checks.disconnected(agent.id);
      for (const routeId of checks.plannedRoutes(agent.id)) state.set(routeId, agent.id, null);
    }
  };
  const unlisten = channel.listen(onEvent);
  // Missed events (a lost LISTEN connection, a relay that shed): the stored verdicts are the truth.
  const unrestart = ctx.cluster ? channel.onClose(() => void readOthers()) : () => {};
  const sync = () => (ctx.cluster ? Promise.all([checks.sync(), readOthers()]).then(() => {}) : checks.sync());
  return {
    // A single daemon holds every session, so no verdict stored before it started is anyone's now.
    start: async () => {
      if (!ctx.cluster) await ctx.db.deleteFrom('route_agent_health').execute();
      await sync();
    },
    sync,
    close: () => {
      unlisten();
      unrestart();
      checks.close();
    },
  };
}
