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
}

export const nothingConnected: TunnelControl = {
  inFlight: () => 0,
  disconnectAgent: () => {},
  routesChanged: () => {},
};
