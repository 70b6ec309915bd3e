import type { Kysely, Transaction } from 'kysely';
import type { Affinity, HeaderRules, PoolPolicy, RouteHealthCheck } from '../../src/api/schemas/route-pools.ts';
import type { RouteCreate, RouteType, RouteUpdate } from '../../src/api/schemas/tunnel.ts';
import { invalidField } from '../../src/errors.ts';
import { checkHealthCheck } from './health-check-rules.ts';
import type { Database, RouteAgentRow, RouteRow } from '../store/schema.ts';

export type Db = Kysely<Database> | Transaction<Database>;

/** One agent of a pool as stored: `target` null is the route's own. */
export interface PoolAgent {
  agentId: number;
  target: string | null;
}

/** What a route holds beyond the seed's fields (docs/API.md#agent-pools), after defaults and merging. */
export interface PoolDraft {
  agents: PoolAgent[];
  policy: PoolPolicy;
  affinity: Affinity;
  healthCheck: RouteHealthCheck | null;
  requestHeaders: HeaderRules;
  responseHeaders: HeaderRules;
  hostHeader: string | null;
  preserveHost: boolean;
  stripPrefix: boolean;
}

const json = <T>(text: string | null, fallback: T): T => (text ? (JSON.parse(text) as T) : fallback);
const NO_RULES: HeaderRules = {};

/** The stored pool fields of a row and its pool rows (in position order; none: a pool of its agent_id). */
export function poolOf(row: RouteRow, agents: RouteAgentRow[] | undefined): PoolDraft {
  return {
    agents: agents?.length
      ? agents.map((a) => ({ agentId: Number(a.agent_id), target: a.target }))
      : [{ agentId: Number(row.agent_id), target: null }],
    policy: row.policy as PoolPolicy,
    affinity: row.affinity as Affinity,
    healthCheck: json<RouteHealthCheck | null>(row.health_check, null),
    requestHeaders: json(row.request_headers, NO_RULES),
    responseHeaders: json(row.response_headers, NO_RULES),
    hostHeader: row.host_header,
    preserveHost: Boolean(row.preserve_host),
    stripPrefix: Boolean(row.strip_prefix),
  };
}

/** The pool rows of some routes (all when `routeIds` is left out), by route, in position order. */
export async function loadPools(db: Db, routeIds?: number[]): Promise<Map<number, RouteAgentRow[]>> {
  const byRoute = new Map<number, RouteAgentRow[]>();
  if (routeIds?.length === 0) return byRoute;
  let query = db.selectFrom('route_agents').selectAll().orderBy('route_id').orderBy('position');
  if (routeIds) query = query.where('route_id', 'in', routeIds);
  for (const row of await query.execute()) {
    const list = byRoute.get(Number(row.route_id)) ?? [];
    list.push(row);
    byRoute.set(Number(row.route_id), list);
  }
  return byRoute;
}

/** Replaces a route's pool rows. */
export async function writePool(trx: Db, routeId: number, agents: PoolAgent[]): Promise<void> {
  await trx.deleteFrom('route_agents').where('route_id', '=', routeId).execute();
  await trx
    .insertInto('route_agents')
    .values(agents.map((a, position) => ({ route_id: routeId, agent_id: a.agentId, position, target: a.target })))
    .execute();
}

export function poolColumns(d: PoolDraft) {
  const rules = (r: HeaderRules) => ((r.set && Object.keys(r.set).length) || r.remove?.length ? JSON.stringify(r) : null);
  return {
    agent_id: d.agents[0].agentId,
    policy: d.policy,
    affinity: d.affinity,
    health_check: d.healthCheck ? JSON.stringify(d.healthCheck) : null,
    request_headers: rules(d.requestHeaders),
    response_headers: rules(d.responseHeaders),
    host_header: d.hostHeader,
    preserve_host: d.preserveHost ? 1 : 0,
    strip_prefix: d.stripPrefix ? 1 : 0,
  };
}

/** The pool given by `agentId` and/or `agents` (400 naming the field when they disagree or repeat an agent). */
function agentsOf(body: RouteCreate | RouteUpdate): PoolAgent[] | undefined {
  const { agentId, agents } = body;
  if (agents === undefined) return agentId === undefined ? undefined : [{ agentId, target: null }];
  if (agentId !== undefined && agents[0]?.agentId !== agentId) {
    throw invalidField('agents', `must start with agentId ${agentId} when both are given`);
  }
  const seen = new Set<number>();
  return agents.map((a, i) => {
    if (seen.has(a.agentId)) throw invalidField(`agents[${i}].agentId`, `agent ${a.agentId} is in the pool twice`);
    seen.add(a.agentId);
    return { agentId: a.agentId, target: a.target ?? null };
  });
}

/** Defaults of a new route's pool fields; `agentId` or `agents` is required. */
export function poolFromCreate(body: RouteCreate): PoolDraft {
  const agents = agentsOf(body);
  if (!agents) throw invalidField('agentId', 'is required (or agents, the pool)');
  return {
    agents,
    policy: body.policy ?? 'round-robin',
    affinity: body.affinity ?? 'none',
    healthCheck: body.healthCheck ?? null,
    requestHeaders: body.requestHeaders ?? NO_RULES,
    responseHeaders: body.responseHeaders ?? NO_RULES,
    hostHeader: body.hostHeader ?? null,
    preserveHost: body.preserveHost ?? false,
    stripPrefix: body.stripPrefix ?? false,
  };
}

/** PUT: the fields given replace the stored ones; HTTP-only fields go when the type becomes TCP. */
export function poolFromUpdate(current: PoolDraft, body: RouteUpdate, type: RouteType): PoolDraft {
  const http = type === 'HTTP';
  return {
    agents: agentsOf(body) ?? current.agents,
    policy: body.policy ?? current.policy,
    affinity: body.affinity ?? (http ? current.affinity : 'none'),
    healthCheck: body.healthCheck === undefined ? current.healthCheck : body.healthCheck,
    requestHeaders: body.requestHeaders ?? (http ? current.requestHeaders : NO_RULES),
    responseHeaders: body.responseHeaders ?? (http ? current.responseHeaders : NO_RULES),
    hostHeader: body.hostHeader === undefined ? (http ? current.hostHeader : null) : body.hostHeader,
    preserveHost: body.preserveHost ?? (http && current.preserveHost),
    stripPrefix: body.stripPrefix ?? (http && current.stripPrefix),
  };
}

/** Hop-by-hop and framing headers belong to the edge and the tunnel, never to a rule. */
const EDGE_HEADERS = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'content-length',
  'host',
]);

function checkRules(field: string, rules: HeaderRules): void {
  for (const name of Object.keys(rules.set ?? {})) {
    if (EDGE_HEADERS.has(name.toLowerCase())) {
      throw invalidField(`${field}.set`, `${name} is the edge's to set${name.toLowerCase() === 'host' ? ' (use hostHeader)' : ''}`);
    }
  }
  for (const [i, name] of (rules.remove ?? []).entries()) {
    if (EDGE_HEADERS.has(name.toLowerCase())) throw invalidField(`${field}.remove[${i}]`, `${name} is the edge's to remove`);
  }
}

const HTTP_HEALTH_FIELDS = ['path', 'method', 'headers', 'expectStatus'] as const;

/** Rules between fields (400 naming the field): HTTP-only fields on a TCP route, Host settings, header names. */
export function checkPool(type: RouteType, d: PoolDraft, body: RouteCreate | RouteUpdate): void {
  if (type === 'TCP') {
    for (const field of ['affinity', 'requestHeaders', 'responseHeaders', 'hostHeader', 'preserveHost', 'stripPrefix'] as const) {
      const given = body[field];
      if (given !== undefined && given !== null && given !== false && given !== 'none')
        throw invalidField(field, 'only HTTP routes have it');
    }
    for (const field of HTTP_HEALTH_FIELDS) {
      if (d.healthCheck?.[field] !== undefined) throw invalidField(`healthCheck.${field}`, "a TCP route's health check is a connect");
    }
  }
  checkHealthCheck(type, d.healthCheck);
  if (d.hostHeader !== null && d.preserveHost) throw invalidField('hostHeader', 'set it or preserveHost, not both');
  checkRules('requestHeaders', d.requestHeaders);
  checkRules('responseHeaders', d.responseHeaders);
}

/** 400 naming the field when an agent of the pool does not exist. */
export async function checkPoolAgents(db: Db, d: PoolDraft): Promise<void> {
  const ids = d.agents.map((a) => a.agentId);
  const found = new Set((await db.selectFrom('agents').select('id').where('id', 'in', ids).execute()).map((r) => Number(r.id)));
  d.agents.forEach((a, i) => {
    if (!found.has(a.agentId))
      throw invalidField(d.agents.length === 1 ? 'agentId' : `agents[${i}].agentId`, `agent ${a.agentId} does not exist`);
  });
}
