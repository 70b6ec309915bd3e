import { hostWithoutPort } from '../../src/tunnel/protocol.ts';
import type { DaemonContext } from '../context.ts';
import { CoalescedReload } from '../util/coalesced.ts';
import { compileAccess, type RouteAccess } from './access/compile.ts';
import { underPrefix } from '../util/path-normalise.ts';

/** An enabled route as the data plane needs it. */
export interface LiveRoute {
  id: number;
  type: 'HTTP' | 'TCP';
  agentId: number;
  target: string;
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
    const rows = await this.#ctx.db.selectFrom('routes').selectAll().where('enabled', '=', 1).execute();
    const byHost = new Map<string, LiveRoute[]>();
    const tcp: LiveRoute[] = [];
    for (const row of rows) {
      const route: LiveRoute = {
        id: Number(row.id),
        type: row.type === 'TCP' ? 'TCP' : 'HTTP',
        agentId: Number(row.agent_id),
        target: row.target,
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
