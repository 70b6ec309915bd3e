/**
 * The health verdicts of pool agents as this pod steers by them (docs/API.md#agent-pools): set by
 * the health checks this pod runs for the agents it holds, and from `route_agent_health` for the
 * agents other pods hold. An agent without a verdict (not checked yet, or a route without a health
 * check) is in the rotation whenever it is connected.
 */
export class PoolHealthState {
  readonly #verdicts = new Map<number, Map<number, boolean>>();
  readonly #listeners = new Set<(routeId: number, agentId: number, healthy: boolean | null) => void>();

  /** Whether the agent may take new requests of the route, as far as health goes. */
  healthy(routeId: number, agentId: number): boolean {
    return this.#verdicts.get(routeId)?.get(agentId) !== false;
  }

  /** The verdict, or null when there is none. */
  verdict(routeId: number, agentId: number): boolean | null {
    return this.#verdicts.get(routeId)?.get(agentId) ?? null;
  }

  /** Records a verdict (null forgets it); listeners hear of changes only. */
  set(routeId: number, agentId: number, healthy: boolean | null): void {
    const previous = this.verdict(routeId, agentId);
    if (previous === healthy) return;
    let route = this.#verdicts.get(routeId);
    if (healthy === null) route?.delete(agentId);
    else {
      if (!route) this.#verdicts.set(routeId, (route = new Map()));
      route.set(agentId, healthy);
    }
    for (const listener of this.#listeners) listener(routeId, agentId, healthy);
  }

  /** Forgets a route's verdicts (the route is gone or has no health check any more). */
  forget(routeId: number): void {
    const route = this.#verdicts.get(routeId);
    if (!route) return;
    this.#verdicts.delete(routeId);
    for (const agentId of route.keys()) for (const listener of this.#listeners) listener(routeId, agentId, null);
  }

  onChange(listener: (routeId: number, agentId: number, healthy: boolean | null) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}
