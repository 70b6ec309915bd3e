import type { Kysely } from 'kysely';
import { shapedChunks } from '../../store/batches.ts';
import type { Database } from '../../store/schema.ts';

/** What the router decides for a resource's alert while an agent it depends on is away. */
export type Hold = 'inhibit' | 'defer' | undefined;

interface RouteLink {
  agentId: number;
  type: string;
  hostname: string | null;
  listenPort: number | null;
}

/** The host (lower case) and port of a resource's target, as far as routes can serve it. */
function endpoint(type: string, target: string): { host: string; port: number | null } | undefined {
  try {
    if (type === 'HTTP' || type === 'WEBSOCKET') {
      const url = new URL(target);
      const secure = url.protocol === 'https:' || url.protocol === 'wss:';
      return { host: url.hostname.replace(/^\[|\]$/g, '').toLowerCase(), port: url.port ? Number(url.port) : secure ? 443 : 80 };
    }
    // The types that connect over TCP to host:port can go through a TCP route (SSH's port defaults to 22).
    if (type === 'TCP' || type === 'TLS' || type === 'GRPC' || type === 'SSH') return hostPort(target, type === 'SSH' ? 22 : null);
    if (type === 'DOCKER') return { host: target.split('/')[0].replace(/:\d+$/, '').toLowerCase(), port: null };
  } catch {
    // An unparsable target depends on no agent.
  }
  return undefined;
}

/** `host:port`, `[v6]:port`, or a bare host with `fallback` as its port. */
function hostPort(target: string, fallback: number | null): { host: string; port: number | null } | undefined {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]+))(?::(\d+))?$/.exec(target);
  if (!m) return undefined;
  const port = m[3] === undefined ? fallback : Number(m[3]);
  return port === null ? undefined : { host: (m[1] ?? m[2]).toLowerCase(), port };
}

/**
 * Inhibition: a resource served through a tunnel route depends on the route's
 * agent. While that agent is down, the resource's alerts are covered by the
 * agent's own AGENT_DOWN and are held back:
 * - the agent has an open incident: the alert is inhibited (never sent);
 * - the agent is disconnected (it was connected before) and has no incident yet: the alert is
 *   deferred (routed on a later pass), since the agent may come back or its
 *   incident may open.
 * A resource depends on an agent when its target's host is an HTTP route's
 * hostname, or its port is a TCP route's listen port on the daemon (whatever
 * the check speaks through it), or when the agent is one of the locations it
 * is checked from (docs/API.md#check-locations).
 */
export async function holdsFor(db: Kysely<Database>, resourceIds: number[]): Promise<Map<number, Hold>> {
  const holds = new Map<number, Hold>();
  if (resourceIds.length === 0) return holds;
  const agents = await db.selectFrom('agents').select(['id', 'status']).where('status', '=', 'DISCONNECTED').execute();
  if (agents.length === 0) return holds;
  const down = new Set(agents.map((a) => a.id));
  const routes: RouteLink[] = (
    await db
      .selectFrom('routes')
      .select(['agent_id', 'type', 'hostname', 'listen_port'])
      .where('enabled', '=', 1)
      .where('agent_id', 'in', [...down])
      .execute()
  ).map((r) => ({ agentId: r.agent_id, type: r.type, hostname: r.hostname?.toLowerCase() ?? null, listenPort: r.listen_port }));
  // Resources checked from a down agent: the first such location, by resource.
  const located = new Map<number, number>();
  for (const part of shapedChunks(resourceIds, 256)) {
    const rows = await db
      .selectFrom('resource_locations')
      .select(['resource_id', 'agent_id'])
      .where('resource_id', 'in', part)
      .where('agent_id', 'in', [...down])
      .orderBy('position')
      .execute();
    for (const row of rows) if (!located.has(row.resource_id)) located.set(row.resource_id, Number(row.agent_id));
  }
  if (routes.length === 0 && located.size === 0) return holds;
  const open = new Set(
    (
      await db.selectFrom('incidents').select('agent_id').where('subject_type', '=', 'agent').where('resolved_at', 'is', null).execute()
    ).map((r) => r.agent_id),
  );
  const resources =
    routes.length === 0
      ? []
      : await db.selectFrom('resources').select(['id', 'resource_type', 'target']).where('id', 'in', resourceIds).execute();
  for (const resource of resources) {
    const at = endpoint(resource.resource_type, resource.target);
    if (!at) continue;
    const link = routes.find((r) => (r.type === 'HTTP' ? r.hostname === at.host : r.listenPort !== null && r.listenPort === at.port));
    // (A TCP route's port links whatever speaks through it: an HTTP check of a service behind a TCP route depends on its agent too.)
    if (link) holds.set(resource.id, open.has(link.agentId) ? 'inhibit' : 'defer');
  }
  for (const [resourceId, agentId] of located) {
    if (holds.get(resourceId) === 'inhibit') continue;
    holds.set(resourceId, open.has(agentId) ? 'inhibit' : 'defer');
  }
  return holds;
}
