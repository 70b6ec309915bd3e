import type { RouteMatch } from '../../src/api/schemas/route-pools.ts';
import type { DaemonContext } from '../context.ts';
import { normalisePath } from '../util/path-normalise.ts';
import type { PoolBalancer } from './pool/balancer.ts';
import type { RouteTable } from './route-table.ts';
import { forwardPath } from './rules.ts';

/**
 * `monctl routes test HOST[/PATH]` (docs/API.md#agent-pools): the route the edge would match and the
 * agent the pool would choose, with the reasons, without sending anything.
 * PLACEHOLDER of the groundwork for the hostname reasons (exact hostnames only); the wildcard owner
 * replaces the matching part.
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
  const none = (reason: string): RouteMatch => ({
    routeId: null,
    routeName: null,
    agentId: null,
    agentName: null,
    forwardPath: null,
    reasons: [reason],
  });
  const normal = normalisePath(path);
  if ('error' in normal) return none(`the edge refuses the path: ${normal.error}`);
  const route = table.match(host, normal.path);
  if (!route) return none(`no route for host ${host} and path ${normal.path}`);
  const row = await ctx.db.selectFrom('routes').select('name').where('id', '=', route.id).executeTakeFirst();
  const pick = balancer.explain(route, clientIp);
  const agent =
    pick.agentId === null ? undefined : await ctx.db.selectFrom('agents').select('name').where('id', '=', pick.agentId).executeTakeFirst();
  return {
    routeId: route.id,
    routeName: row?.name ?? null,
    agentId: pick.agentId,
    agentName: agent?.name ?? null,
    forwardPath: forwardPath(route, normal.path),
    reasons: [`hostname ${route.hostname}, path prefix ${route.pathPrefix}`, ...pick.reasons],
  };
}
