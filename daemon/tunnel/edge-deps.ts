import type { DaemonContext } from '../context.ts';
import type { EdgeGate } from './access/gate.ts';
import type { Routing } from './edge-route.ts';
import type { Observer } from './observe.ts';
import type { PoolBalancer } from './pool/balancer.ts';
import type { RemoteAgents } from './pool/remote-agents.ts';
import type { RouteTable } from './route-table.ts';
import type { AgentSessions } from './sessions.ts';
import type { PodRelay } from './tunnel-relay.ts';

/** What the edge's HTTP and upgrade paths work with. */
export interface EdgeDeps {
  ctx: DaemonContext;
  table: RouteTable;
  sessions: AgentSessions;
  observer: Observer;
  gate: EdgeGate;
  /** Chooses the agent of the route's pool for each exchange (pool/balancer.ts). */
  balancer: PoolBalancer;
  /** Pods: reaches agents whose session is on another pod. */
  relay?: PodRelay;
  /** Pods: which agents other pods hold (pool/remote-agents.ts). */
  remote?: RemoteAgents;
}

/** The target timeout of a relayed exchange (the agent's own is known to the pod holding its session). */
export const RELAY_TARGET_TIMEOUT_MS = 30_000;

/** A routed request (not refused). */
export type Routed = Exclude<Routing, { error: unknown }>;
