import type { PoolStat } from '../../tunnel-control.ts';

/** This pod's traffic through one agent of one route. */
export interface AgentCounter {
  inFlight: number;
  requests: number;
}

/** One route's round-robin position and per-agent counters. */
export interface RouteCounters {
  next: number;
  byAgent: Map<number, AgentCounter>;
}

/**
 * Per route and agent: exchanges in flight (least-outstanding reads them) and sent since start.
 * Created on a route's first exchange and kept while the process lives: bounded by the routes and
 * agents that exist (ids are never reused), a few numbers each.
 */
export class PoolCounters {
  readonly #byRoute = new Map<number, RouteCounters>();

  route(routeId: number): RouteCounters {
    let counters = this.#byRoute.get(routeId);
    if (!counters) this.#byRoute.set(routeId, (counters = { next: 0, byAgent: new Map() }));
    return counters;
  }

  agent(routeId: number, agentId: number): AgentCounter {
    const { byAgent } = this.route(routeId);
    let counter = byAgent.get(agentId);
    if (!counter) byAgent.set(agentId, (counter = { inFlight: 0, requests: 0 }));
    return counter;
  }

  inFlight(routeId: number, agentId: number): number {
    return this.#byRoute.get(routeId)?.byAgent.get(agentId)?.inFlight ?? 0;
  }

  /** An exchange went to the agent. */
  acquire(routeId: number, agentId: number): void {
    const counter = this.agent(routeId, agentId);
    counter.inFlight++;
    counter.requests++;
  }

  /** It ended (or moved to another agent). */
  release(routeId: number, agentId: number): void {
    const counter = this.#byRoute.get(routeId)?.byAgent.get(agentId);
    if (counter && counter.inFlight > 0) counter.inFlight--;
  }

  stats(routeId: number): PoolStat[] {
    const counters = this.#byRoute.get(routeId);
    if (!counters) return [];
    return [...counters.byAgent].map(([agentId, c]) => ({ agentId, inFlight: c.inFlight, requests: c.requests }));
  }
}
