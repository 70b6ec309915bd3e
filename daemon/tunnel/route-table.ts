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
  rules: LiveRules;
  hostname: string;
  pathPrefix: string;
  listenPort: number | null;
  /** Whether paths with `%2F` / `%5C` are forwarded (else refused with 400). */
  allowEncodedSlashes: boolean;
  /** Access control at the edge: daemon/tunnel/access/. */
  access: RouteAccess;
}

/** The hostname rule a request's host falls under: an exact name, or the wildcard `*.suffix` that won. */
export interface HostRule {
  pattern: string;
  wildcard: boolean;
  routes: readonly LiveRoute[];
}

/**
 * The enabled routes, cached in memory and reloaded on `routesChanged()`.
 * HTTP routes are indexed by hostname, longest path prefix first: exact names
 * in one map, wildcards in another by their suffix (`*.apps.example.com` under
 * `apps.example.com`), so a request costs one lookup per label of its host,
 * never a scan of the wildcards (docs/API.md#wildcard-hostnames).
 */
export class RouteTable {
  readonly #ctx: DaemonContext;
  #byHost = new Map<string, readonly LiveRoute[]>();
  #bySuffix = new Map<string, readonly LiveRoute[]>();
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
    const [rows, pools, pages] = await Promise.all([
      this.#ctx.db.selectFrom('routes').selectAll().where('enabled', '=', 1).execute(),
      loadPools(this.#ctx.db),
      this.#ctx.db.selectFrom('status_pages').select('custom_hostname').where('custom_hostname', 'is not', null).execute(),
    ]);
    const byHost = new Map<string, LiveRoute[]>();
    const bySuffix = new Map<string, LiveRoute[]>();
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
      const [index, key] = route.hostname.startsWith('*.') ? [bySuffix, route.hostname.slice(2)] : [byHost, route.hostname];
      const list = index.get(key) ?? [];
      list.push(route);
      index.set(key, list);
    }
    // A status page's custom hostname is an exact name too: its other paths are its routes' (or 404), never a wildcard's.
    for (const page of pages) if (!byHost.has(page.custom_hostname!)) byHost.set(page.custom_hostname!, []);
    for (const index of [byHost, bySuffix])
      for (const list of index.values()) list.sort((a, b) => b.pathPrefix.length - a.pathPrefix.length);
    this.#byHost = byHost;
    this.#bySuffix = bySuffix;
    this.#tcp = tcp;
    this.#onTcp(tcp);
  }

  /**
   * The HTTP route for a host and a normalised path: the exact hostname, else the longest wildcard
   * covering it, then the longest prefix (ending at a segment boundary) of that hostname alone.
   */
  match(host: string | undefined, path: string): LiveRoute | undefined {
    const list = this.#routesOf(hostWithoutPort(host));
    return list?.find((r) => underPrefix(path, r.pathPrefix));
  }

  /** The hostname rule that wins for a host (`monctl routes test`), undefined when none covers it. */
  ruleOf(host: string): HostRule | undefined {
    const name = hostWithoutPort(host);
    const exact = this.#byHost.get(name);
    if (exact) return { pattern: name, wildcard: false, routes: exact };
    const suffix = this.#suffixOf(name);
    return suffix === undefined ? undefined : { pattern: `*.${suffix}`, wildcard: true, routes: this.#bySuffix.get(suffix)! };
  }

  #routesOf(name: string): readonly LiveRoute[] | undefined {
    const exact = this.#byHost.get(name);
    if (exact || this.#bySuffix.size === 0) return exact;
    const suffix = this.#suffixOf(name);
    return suffix === undefined ? undefined : this.#bySuffix.get(suffix);
  }

  /** The longest suffix (one label off, then two, ...) that wildcards claim: one map lookup per label. */
  #suffixOf(name: string): string | undefined {
    for (let dot = name.indexOf('.'); dot > 0; dot = name.indexOf('.', dot + 1)) {
      const suffix = name.slice(dot + 1);
      if (this.#bySuffix.has(suffix)) return suffix;
    }
    return undefined;
  }
}
