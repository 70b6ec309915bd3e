import type { RouteMatch } from '../../src/api/schemas/route-pools.ts';
import { hostWithoutPort } from '../../src/tunnel/protocol.ts';
import type { DaemonContext } from '../context.ts';
import { routeHostnameCovers } from '../util/hostname.ts';
import { normalisePath, underPrefix } from '../util/path-normalise.ts';
import { explainAccess } from './explain-access.ts';
import type { PoolBalancer } from './pool/balancer.ts';
import type { RouteTable } from './route-table.ts';
import { forwardPath } from './rules.ts';

/**
 * `monctl routes test HOST[/PATH]` (docs/API.md#routes): the route the edge would match and the
 * agent the pool would choose, with the reasons, without sending anything. The match is the edge's
 * own (RouteTable); the database only names routes and agents and finds the disabled routes that
 * would have covered the request.
 */
export async function explainMatch(
  ctx: Pick<DaemonContext, 'db'>,
  table: RouteTable,
  balancer: PoolBalancer,
  host: string,
  path: string,
  clientIp: string | null,
): Promise<RouteMatch> {
  await table.loading;
  const reasons: string[] = [];
  const none = (reason: string): RouteMatch => ({
    routeId: null,
    routeName: null,
    agentId: null,
    agentName: null,
    forwardPath: null,
    reasons: [...reasons, reason],
  });
  const q = path.indexOf('?');
  const normal = normalisePath(q < 0 ? path : path.slice(0, q));
  if ('error' in normal) return none(`the edge refuses the path: ${normal.error} (400)`);
  const name = hostWithoutPort(host);
  const rows = await ctx.db
    .selectFrom('routes')
    .select(['id', 'name', 'hostname', 'path_prefix', 'enabled'])
    .where('type', '=', 'HTTP')
    .execute();
  const names = new Map(rows.map((r) => [Number(r.id), r.name]));
  for (const r of rows) {
    if (r.enabled || !r.hostname || !routeHostnameCovers(r.hostname, name) || !underPrefix(normal.path, r.path_prefix || '/')) continue;
    reasons.push(`route ${r.name} (${r.hostname}${r.path_prefix ?? '/'}) is disabled: not considered`);
  }
  const rule = table.ruleOf(name);
  if (!rule) return none(`no route for host ${name}: no exact hostname and no wildcard covers it (404)`);
  // Wildcards that also cover the host but lose: all of them to an exact name, the shorter ones to a wildcard.
  const losers = [...new Set(rows.filter((r) => r.enabled).map((r) => r.hostname ?? ''))].filter(
    (h) => h !== rule.pattern && h.startsWith('*.') && routeHostnameCovers(h, name),
  );
  const over = losers.length ? ` (over ${losers.join(', ')})` : '';
  reasons.push(rule.wildcard ? `wildcard ${rule.pattern}: the longest covering ${name}${over}` : `exact hostname ${name}${over}`);
  const route = rule.routes.find((r) => underPrefix(normal.path, r.pathPrefix));
  if (!route) {
    if (rule.routes.length === 0) return none(`${name} is a status page's custom hostname: wildcards do not serve it (404)`);
    const prefixes = rule.routes.map((r) => r.pathPrefix).join(', ');
    return none(`no prefix of ${rule.pattern} (${prefixes}) covers ${normal.path}; other hostnames are not tried (404)`);
  }
  const others = rule.routes.filter((r) => r !== route && underPrefix(normal.path, r.pathPrefix)).map((r) => r.pathPrefix);
  reasons.push(
    `path prefix ${route.pathPrefix}: the longest under ${rule.pattern} covering ${normal.path}${others.length ? ` (over ${others.join(', ')})` : ''}`,
  );
  const matched = { routeId: route.id, routeName: names.get(route.id) ?? null };
  if (normal.encodedSlash && !route.allowEncodedSlashes) {
    return { ...none('the path holds an encoded slash (%2F or %5C) and the route does not allow them (400)'), ...matched };
  }
  const access = explainAccess(route, clientIp);
  reasons.push(...access.notes);
  if (access.refused) return { ...none(`${access.refused}: no agent is chosen`), ...matched };
  const pick = balancer.explain(route, clientIp);
  const agent =
    pick.agentId === null ? undefined : await ctx.db.selectFrom('agents').select('name').where('id', '=', pick.agentId).executeTakeFirst();
  return {
    ...matched,
    agentId: pick.agentId,
    agentName: agent?.name ?? null,
    forwardPath: forwardPath(route, normal.path + (q < 0 ? '' : path.slice(q))),
    reasons: [...reasons, ...pick.reasons],
  };
}
