import type { PoolStat } from '../../tunnel-control.ts';
import type { LiveRoute } from '../route-table.ts';
import type { PoolHealthState } from './health-state.ts';

/**
 * Chooses the agent of a route's pool for each request or TCP connection (docs/API.md#agent-pools).
 * PLACEHOLDER of the groundwork: every exchange still goes to the first agent; the pool owner
 * replaces this file (policies, affinity, failover, agents on other pods, the counters).
 */
export class PoolBalancer {
  readonly health: PoolHealthState;

  constructor(health: PoolHealthState) {
    this.health = health;
  }

  /** This pod's traffic through each agent of the route's pool. */
  stats(_routeId: number): PoolStat[] {
    return [];
  }

  /** The agent a request from `clientIp` would take now, and why (`monctl routes test`); nothing is counted. */
  explain(route: LiveRoute, _clientIp: string | null): { agentId: number | null; reasons: string[] } {
    return { agentId: route.agentId, reasons: ['the first agent of the pool'] };
  }
}
