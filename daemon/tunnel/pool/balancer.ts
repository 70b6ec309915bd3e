import type { PoolStat } from '../../tunnel-control.ts';
import type { LiveMember, LiveRoute } from '../route-table.ts';
import { affinityScore, ipHash } from './affinity.ts';
import { PoolCounters } from './counters.ts';
import { type Rotation, Standing, STANDING_REASON } from './rotation.ts';

/** The most agents a pool holds (route-pool.ts validates it): the size of the scratch array. */
const MAX_POOL = 64;

/**
 * Chooses the agent of a route's pool for each request, WebSocket upgrade or TCP connection
 * (docs/API.md#agent-pools) among the rotation (rotation.ts), by the route's policy: `round-robin`,
 * `least-outstanding` (fewest in flight through this route on this pod) or `failover` (the first in
 * pool order); `client-ip` affinity (HTTP) by rendezvous hashing (affinity.ts). A pool of one takes
 * a fast path. Choosing counts nothing: the edge counts the exchange it starts (acquire/release).
 */
export class PoolBalancer {
  readonly rotation: Rotation;
  readonly #counters = new PoolCounters();
  /** Each member's standing during one choice (choices are synchronous: one array serves them all). */
  readonly #standing = new Uint8Array(MAX_POOL);

  constructor(rotation: Rotation) {
    this.rotation = rotation;
  }

  /**
   * The member to use now, or undefined when none is in the rotation. `exclude`: an agent that just
   * failed this request (the one retry goes elsewhere). `clientIp` counts for client-ip affinity only.
   */
  pick(route: LiveRoute, clientIp: string | null, exclude = -1): LiveMember | undefined {
    const agents = route.agents;
    if (agents.length === 1) {
      const only = agents[0];
      // A suspect agent still takes the requests of a pool of one: there is nobody else to send them to.
      return only.agentId !== exclude && this.rotation.standing(route, only.agentId) <= Standing.Suspect ? only : undefined;
    }
    const limit = this.#standings(route, exclude);
    if (limit < 0) return undefined;
    const index = this.#choose(route, limit, clientIp, true);
    return index < 0 ? undefined : agents[index];
  }

  /** Standings into the scratch array; the worst standing usable now (suspects only if nobody else), or -1. */
  #standings(route: LiveRoute, exclude: number): number {
    const standing = this.#standing;
    let best: number = Standing.NotConnected;
    const n = Math.min(route.agents.length, MAX_POOL);
    for (let i = 0; i < n; i++) {
      const agentId = route.agents[i].agentId;
      const s = agentId === exclude ? Standing.NotConnected : this.rotation.standing(route, agentId);
      standing[i] = s;
      if (s < best) best = s;
    }
    if (best <= Standing.Remote) return Standing.Remote;
    return best === Standing.Suspect ? Standing.Suspect : -1;
  }

  /** The index chosen among members standing at `limit` or better; `advance`: move the round-robin on. */
  #choose(route: LiveRoute, limit: number, clientIp: string | null, advance: boolean): number {
    const standing = this.#standing;
    const n = Math.min(route.agents.length, MAX_POOL);
    if (route.policy === 'failover') {
      for (let i = 0; i < n; i++) if (standing[i] <= limit) return i;
      return -1;
    }
    if (route.affinity === 'client-ip' && clientIp !== null && route.type === 'HTTP') {
      const hashed = ipHash(clientIp);
      let chosen = -1;
      let top = -1;
      for (let i = 0; i < n; i++) {
        if (standing[i] > limit) continue;
        const score = affinityScore(hashed, route.agents[i].agentId);
        if (score > top) {
          top = score;
          chosen = i;
        }
      }
      return chosen;
    }
    const counters = this.#counters.route(route.id);
    const start = counters.next % n;
    if (advance) counters.next = (start + 1) % n;
    if (route.policy === 'least-outstanding') {
      // Ties go round-robin: from the rotating start, the first with the fewest in flight.
      let chosen = -1;
      let fewest = Infinity;
      for (let k = 0; k < n; k++) {
        const i = (start + k) % n;
        if (standing[i] > limit) continue;
        const inFlight = this.#counters.inFlight(route.id, route.agents[i].agentId);
        if (inFlight < fewest) {
          fewest = inFlight;
          chosen = i;
        }
      }
      return chosen;
    }
    for (let k = 0; k < n; k++) {
      const i = (start + k) % n;
      if (standing[i] <= limit) return i;
    }
    return -1;
  }

  /** An exchange starts through the agent (poolStats, least-outstanding). */
  acquire(routeId: number, agentId: number): void {
    this.#counters.acquire(routeId, agentId);
  }

  /** It ended, or moved to another agent. */
  release(routeId: number, agentId: number): void {
    this.#counters.release(routeId, agentId);
  }

  /** This pod's traffic through each agent of the route's pool. */
  stats(routeId: number): PoolStat[] {
    return this.#counters.stats(routeId);
  }

  /** The agent a request from `clientIp` would take now, and why (`monctl routes test`); nothing is counted. */
  explain(route: LiveRoute, clientIp: string | null): { agentId: number | null; reasons: string[] } {
    const reasons: string[] = [];
    const limit = this.#standings(route, -1);
    const n = Math.min(route.agents.length, MAX_POOL);
    for (let i = 0; i < n; i++) {
      const s = this.#standing[i];
      const usable = limit >= 0 && s <= limit;
      reasons.push(`agent ${route.agents[i].agentId}: ${STANDING_REASON[s]}${usable ? ', in the rotation' : ', skipped'}`);
    }
    if (limit < 0) {
      reasons.push('no agent in the rotation: the edge answers 503 no-healthy-agent');
      return { agentId: null, reasons };
    }
    if (limit === Standing.Suspect) reasons.push('every agent in the rotation is suspect: they are used all the same');
    const index = n === 1 ? 0 : this.#choose(route, limit, clientIp, false);
    const agentId = route.agents[index].agentId;
    reasons.push(`policy ${route.policy}${this.#how(route, clientIp)}: agent ${agentId}`);
    return { agentId, reasons };
  }

  #how(route: LiveRoute, clientIp: string | null): string {
    if (route.agents.length === 1) return ' (a pool of one)';
    if (route.policy === 'failover') return ' (the first agent of the rotation in pool order)';
    if (route.affinity === 'client-ip' && route.type === 'HTTP') {
      return clientIp === null ? ', client-ip affinity without a client IP' : `, client-ip affinity for ${clientIp}`;
    }
    if (route.policy === 'least-outstanding') return ' (the fewest requests in flight on this pod, then the next in turn)';
    return ' (the next agent in turn)';
  }
}
