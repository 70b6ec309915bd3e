import type { RouteMatch } from '../src/api/schemas/route-pools.ts';
import type { ProbeLoad } from '../src/api/schemas/tunnel.ts';
import type { RemoteAnswer, RemoteCheck } from '../src/tunnel/probe-protocol.ts';

/** How long past the check's own timeout the daemon waits for the agent's answer. */
export const AGENT_GRACE_MS = 5_000;

/** A remote check's outcome: `ran: false` when the agent did not check, and the message says why. */
export type RemoteOutcome = ({ ran: true } & RemoteAnswer) | { ran: false; message: string };

/**
 * What the control plane (tunnel administration API) asks of the data plane
 * (agent sessions and the edge). The data plane installs its implementation on
 * the context when it starts; before that, nothing is connected.
 */
export interface TunnelControl {
  /** Requests (or TCP connections) in flight through a route right now. */
  inFlight(routeId: number): number;
  /** Drops the live session of an agent, if it has one (token rotated, agent deleted). */
  disconnectAgent(agentId: number, reason: string): void;
  /** Route definitions changed (created, updated, deleted): reload listeners and matching. */
  routesChanged(): void;
  /** Runs a check at an agent, over its tunnel session; `name` is for the messages. */
  probeAgent(agentId: number, name: string, check: RemoteCheck): Promise<RemoteOutcome>;
  /** The probe load of an agent connected here. */
  probeLoad(agentId: number): ProbeLoad;
  /** This pod's traffic through each agent of a route's pool: in flight now, and sent since it started. */
  poolStats(routeId: number): PoolStat[];
  /** Which route and agent a request would take now, and why (`monctl routes test`). */
  matchRoute(host: string, path: string, clientIp: string | null): Promise<RouteMatch>;
}

export interface PoolStat {
  agentId: number;
  inFlight: number;
  requests: number;
}

export const nothingConnected: TunnelControl = {
  inFlight: () => 0,
  disconnectAgent: () => {},
  routesChanged: () => {},
  probeAgent: async (_id, name) => ({ ran: false, message: `agent ${name} is not connected (this daemon runs no tunnel)` }),
  probeLoad: (agentId) => ({ agentId, checksPerMinute: 0, inFlight: 0, skipped: 0 }),
  poolStats: () => [],
  matchRoute: async () => ({
    routeId: null,
    routeName: null,
    agentId: null,
    agentName: null,
    forwardPath: null,
    reasons: ['this daemon runs no tunnel'],
  }),
};
