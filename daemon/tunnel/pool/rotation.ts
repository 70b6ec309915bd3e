import type { LiveRoute } from '../route-table.ts';
import type { AgentSessions, Link } from '../sessions.ts';
import type { PoolHealthState } from './health-state.ts';
import type { RemoteAgents } from './remote-agents.ts';

/**
 * A session whose keepalive PING has gone unanswered this long, with not a byte from the agent
 * since, is suspect: skipped while other agents are fine. The session is only cut after
 * PING_TIMEOUT_MS (10 s, so that a busy host is not dropped); a live agent answers in
 * milliseconds, so 1 s of silence already says "do not send it new requests" (docs/DECISIONS.md).
 */
export const SUSPECT_AFTER_MS = 1_000;

/** Where a pool member stands for new requests (numbers, compared without allocating). */
export const Standing = {
  /** Connected here, answering its keepalive. */
  Local: 0,
  /** Connected to another pod (reached through the pod relay). */
  Remote: 1,
  /** Connected here, keepalive overdue: used only when no agent stands better. */
  Suspect: 2,
  Unhealthy: 3,
  NotConnected: 4,
} as const;
export type Standing = (typeof Standing)[keyof typeof Standing];

export const STANDING_REASON: readonly string[] = [
  'connected to this pod',
  'connected to another pod',
  `keepalive unanswered for over ${SUSPECT_AFTER_MS / 1000} s`,
  'unhealthy (its health check fails)',
  'not connected',
];

/** Whether a live session's keepalive is overdue. */
export function suspect(link: Link): boolean {
  return link.pingAt !== 0 && Date.now() - link.pingAt > SUSPECT_AFTER_MS && link.mux.bytesRead === link.pingRead;
}

/** The rotation of a route: its agents connected on any pod, minus those whose health check fails. */
export class Rotation {
  readonly sessions: AgentSessions;
  readonly health: PoolHealthState;
  readonly remote: RemoteAgents | undefined;

  constructor(sessions: AgentSessions, health: PoolHealthState, remote: RemoteAgents | undefined) {
    this.sessions = sessions;
    this.health = health;
    this.remote = remote;
  }

  standing(route: LiveRoute, agentId: number): Standing {
    if (!this.health.healthy(route.id, agentId)) return Standing.Unhealthy;
    const link = this.sessions.get(agentId);
    if (link) return suspect(link) ? Standing.Suspect : Standing.Local;
    return this.remote?.url(agentId) !== undefined ? Standing.Remote : Standing.NotConnected;
  }
}
