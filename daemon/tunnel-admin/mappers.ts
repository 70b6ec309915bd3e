import type { Agent, AgentStatus, Pod, Route, RouteLogEntry, RouteType } from '../../src/api/schemas/tunnel.ts';
import { formatDateTime, formatNullable } from '../../src/time.ts';
import type { AgentRow, PodRow, RouteAgentRow, RouteLogRow, RouteRow } from '../store/schema.ts';
import { accessOf } from './route-access.ts';
import { poolOf } from './route-pool.ts';

/** Rows (epoch ms, 0/1, snake_case) to the wire shapes of docs/API.md#tunnel-administration. */
export function toAgent(row: AgentRow): Agent {
  return {
    id: Number(row.id),
    name: row.name,
    status: row.status as AgentStatus,
    hasToken: row.token_hash !== null,
    tokenCreatedAt: formatNullable(row.token_created_at),
    connectedAt: formatNullable(row.connected_at),
    lastSeenAt: formatNullable(row.last_seen_at),
    podId: row.pod_id === null ? null : Number(row.pod_id),
    remoteAddress: row.remote_address,
    version: row.version,
    createdAt: formatDateTime(row.created_at),
  };
}

/** `agents`: the route's pool rows in position order. */
export function toRoute(row: RouteRow, agents: RouteAgentRow[] | undefined): Route {
  const access = accessOf(row);
  const pool = poolOf(row, agents);
  return {
    id: Number(row.id),
    name: row.name,
    type: row.type as RouteType,
    agentId: Number(row.agent_id),
    agents: pool.agents,
    policy: pool.policy,
    affinity: pool.affinity,
    healthCheck: pool.healthCheck,
    requestHeaders: pool.requestHeaders,
    responseHeaders: pool.responseHeaders,
    hostHeader: pool.hostHeader,
    preserveHost: pool.preserveHost,
    stripPrefix: pool.stripPrefix,
    target: row.target,
    hostname: row.hostname,
    pathPrefix: row.path_prefix,
    listenPort: row.listen_port === null ? null : Number(row.listen_port),
    allowEncodedSlashes: Boolean(row.allow_encoded_slashes),
    enabled: Boolean(row.enabled),
    auth: access.auth,
    basicUsers: access.basicUsers.map((u) => u.username),
    ipAllow: access.ipAllow,
    ipDeny: access.ipDeny,
    rateLimit: access.rateLimit,
    httpsRedirect: access.httpsRedirect,
    sso: access.auth === 'oidc' ? access.sso : null,
    createdAt: formatDateTime(row.created_at),
    updatedAt: formatDateTime(row.updated_at),
  };
}

export function toLogEntry(row: RouteLogRow): RouteLogEntry {
  return {
    id: Number(row.id),
    routeId: Number(row.route_id),
    at: formatDateTime(row.at),
    method: row.method,
    path: row.path,
    status: row.status === null ? null : Number(row.status),
    durationMs: Number(row.duration_ms),
    bytesIn: Number(row.bytes_in),
    bytesOut: Number(row.bytes_out),
    clientIp: row.client_ip,
    agentId: row.agent_id === null ? null : Number(row.agent_id),
    podId: row.pod_id === null ? null : Number(row.pod_id),
    error: row.error,
  };
}

export function toPod(row: PodRow): Pod {
  return { id: Number(row.id), name: row.name, startedAt: formatDateTime(row.started_at), version: row.version };
}
