import type { Affinity, PoolPolicy } from '../../src/api/schemas/route-pools.ts';
import { hostWithoutPort } from '../../src/tunnel/protocol.ts';
import { loadPools, poolOf } from '../tunnel-admin/route-pool.ts';
import type { DaemonContext } from '../context.ts';
import { CoalescedReload } from '../util/coalesced.ts';
import { compileAccess, type RouteAccess } from './access/compile.ts';
import { compileRules, type LiveRules } from './rules.ts';
import { underPrefix } from '../util/path-normalise.ts';

/** One agent of a live route's pool, with its target (its own, else the route's). */
export interface LiveMember {
  agentId: number;
  target: string;
}

/** What an HTTP route changes in the messages it forwards (docs/API.md#header-and-path-rules), compiled. */
export type { LiveRules } from './rules.ts';

/** An enabled route as the data plane needs it. */
export interface LiveRoute {
  id: number;
  type: 'HTTP' | 'TCP';
  /** The first agent of the pool, and its target. */
  agentId: number;
  target: string;
  /** The pool in order (docs/API.md#agent-pools); agents[0] is agentId. */
  agents: LiveMember[];
  policy: PoolPolicy;
  affinity: Affinity;
  /** Whether the route has a health check (else every connected agent is in the rotation). */
  healthChecked: boolean;
  rules: LiveRules;
  hostname: string;
  pathPrefix: string;
  listenPort: number | null;
  /** Whether paths with `%2F` / `%5C` are forwarded (else refused with 400). */
  allowEncodedSlashes: boolean;
  /** Access control at the edge: daemon/tunnel/access/. */
  access: RouteAccess;
}

/**
 * The enabled routes, cached in memory and reloaded on `routesChanged()`.
 * HTTP routes are indexed by hostname, longest path prefix first.
 */
export class RouteTable {
  readonly #ctx: DaemonContext;
  #byHost = new Map<string, LiveRoute[]>();
  #tcp: LiveRoute[] = [];
  readonly #onTcp: (routes: LiveRoute[]) => void;
  /** Never rejects: requests wait on it before answering 404, and a failed load keeps the last table. */
  readonly #reload = new CoalescedReload(async () => {
    try {
      await this.#load();
    } catch (err) {
      if (!this.#ctx.draining) this.#ctx.log.error({ err }, 'tunnel: loading routes failed');
    }
  });

  constructor(ctx: DaemonContext, onTcp: (routes: LiveRoute[]) => void) {
    this.#ctx = ctx;
    this.#onTcp = onTcp;
  }

  get tcpRoutes(): LiveRoute[] {
    return this.#tcp;
  }

  /** Pending reload, if any: a request that finds no route waits for it before answering 404. */
  get loading(): Promise<void> | undefined {
    return this.#reload.running;
  }

  /** Reloads now; calls made during a reload coalesce into one more reload after it. */
  reload(): Promise<void> {
    return this.#reload.run();
  }

  async #load(): Promise<void> {
    const [rows, pools] = await Promise.all([
      this.#ctx.db.selectFrom('routes').selectAll().where('enabled', '=', 1).execute(),
      loadPools(this.#ctx.db),
    ]);
    const byHost = new Map<string, LiveRoute[]>();
    const tcp: LiveRoute[] = [];
    for (const row of rows) {
      const pool = poolOf(row, pools.get(Number(row.id)));
      const agents = pool.agents.map((a) => ({ agentId: a.agentId, target: a.target ?? row.target }));
      const route: LiveRoute = {
        id: Number(row.id),
        type: row.type === 'TCP' ? 'TCP' : 'HTTP',
        agentId: agents[0].agentId,
        target: agents[0].target,
        agents,
        policy: pool.policy,
        affinity: pool.affinity,
        healthChecked: pool.healthCheck !== null,
        rules: compileRules(pool, row.path_prefix || '/'),
        hostname: hostWithoutPort(row.hostname ?? ''),
        pathPrefix: row.path_prefix || '/',
        listenPort: row.listen_port === null ? null : Number(row.listen_port),
        allowEncodedSlashes: Boolean(row.allow_encoded_slashes),
        access: compileAccess(row),
      };
      if (route.type === 'TCP') {
        tcp.push(route);
        continue;
      }
      const list = byHost.get(route.hostname) ?? [];
      list.push(route);
      byHost.set(route.hostname, list);
    }
    for (const list of byHost.values()) list.sort((a, b) => b.pathPrefix.length - a.pathPrefix.length);
    this.#byHost = byHost;
    this.#tcp = tcp;
    this.#onTcp(tcp);
  }

  /** The HTTP route for a host and a normalised path: exact host, longest prefix ending at a segment boundary. */
  match(host: string | undefined, path: string): LiveRoute | undefined {
    const list = this.#byHost.get(hostWithoutPort(host));
    return list?.find((r) => underPrefix(path, r.pathPrefix));
  }
}
