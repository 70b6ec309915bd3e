/**
 * The health verdicts of pool agents as this pod steers by them (docs/API.md#agent-pools): set by
 * the health checks this pod runs for the agents it holds, and from `route_agent_health` for the
 * agents other pods hold. An agent without a verdict (not checked yet, or a route without a health
 * check) is in the rotation whenever it is connected.
 */
export class PoolHealthState {
  readonly #verdicts = new Map<number, Map<number, boolean>>();

  /** Whether the agent may take new requests of the route, as far as health goes. */
  healthy(routeId: number, agentId: number): boolean {
    return this.#verdicts.get(routeId)?.get(agentId) !== false;
  }

  /** Records a verdict; null forgets it. */
  set(routeId: number, agentId: number, healthy: boolean | null): void {
    let route = this.#verdicts.get(routeId);
    if (healthy === null) {
      route?.delete(agentId);
      return;
    }
    if (!route) this.#verdicts.set(routeId, (route = new Map()));
    route.set(agentId, healthy);
  }

  /** Forgets a route's verdicts (the route is gone or has no health check any more). */
  forget(routeId: number): void {
    this.#verdicts.delete(routeId);
  }
}
