import type { Command } from 'commander';
import type { Agent, Route, RouteCreate, RouteLogEntry, RouteUpdate } from '../../src/api/schemas/tunnel.ts';
import { ExitCode, MonctlError } from '../../src/errors.ts';
import { ops } from '../api/ops.ts';
import { confirm } from '../io/prompt.ts';
import type { View } from '../output/render.ts';
import { act, type Runtime, resolveRef, withOutput } from '../runtime.ts';
import { registerRouteTest } from './route-test.ts';
import { needsCurrent, type PoolFlags, parseAgents, poolBody, withPoolFlags } from './route-pool-flags.ts';
import { poolCell, poolDetailColumns, poolRows, poolView } from './route-pool-view.ts';
import { ssoCell } from './route-sso-flags.ts';
import {
  type AccessFlags,
  accessBody,
  authCell,
  certCell,
  checkHttpOnly,
  rateCell,
  wantsHttpOnly,
  withAccessFlags,
} from './route-access.ts';

/**
 * Agent names by id, for the AGENT columns of tables: one list call per command, and none for
 * json/yaml (which keep `agentId` as the daemon sent it). An unknown id shows as itself.
 */
async function agentNames(rt: Runtime, needed = !rt.structured): Promise<Map<number, string>> {
  return needed ? new Map((await rt.client.call(ops.listAgents)).map((a) => [a.id, a.name])) : new Map();
}
const nameOf = (names: Map<number, string>, id: number | null | undefined) => (id == null ? id : (names.get(id) ?? id));

export const routeView = (names: Map<number, string>): View<Route> => ({
  columns: [
    { header: 'ID', get: (r) => r.id },
    { header: 'NAME', get: (r) => r.name },
    { header: 'TYPE', get: (r) => r.type },
    // The pool: its first agents by name, `+2` for the rest (routes get lists them all).
    { header: 'AGENT', get: (r) => poolCell(r, names) },
    { header: 'MATCH', get: (r) => (r.type === 'TCP' ? `:${r.listenPort}` : `${r.hostname}${r.pathPrefix ?? '/'}`) },
    { header: 'TARGET', get: (r) => r.target },
    { header: 'ENABLED', get: (r) => r.enabled },
    { header: 'AUTH', get: authCell },
    { header: 'ENCODED-SLASHES', get: (r) => r.allowEncodedSlashes, wide: true },
    { header: 'IP-ALLOW', get: (r) => r.ipAllow, wide: true },
    { header: 'IP-DENY', get: (r) => r.ipDeny, wide: true },
    { header: 'RATE-LIMIT', get: rateCell, wide: true },
    { header: 'HTTPS-REDIRECT', get: (r) => r.httpsRedirect, wide: true },
    { header: 'SSO', get: ssoCell, wide: true },
    { header: 'CREATED', get: (r) => r.createdAt, wide: true },
    { header: 'UPDATED', get: (r) => r.updatedAt, wide: true },
  ],
});

/** `routes get`: the list's columns, the pool's fields and the certificate the HTTPS edge serves for the hostname. */
const detailView = (names: Map<number, string>): View<Route> => ({
  columns: [
    ...routeView(names)
      .columns.filter((c) => c.header !== 'CREATED' && c.header !== 'UPDATED')
      .map((c) => (c.header === 'AGENT' ? { ...c, get: (r: Route) => r.agents.map((a) => nameOf(names, a.agentId)) } : c)),
    ...poolDetailColumns,
    { header: 'CERTIFICATE', get: certCell },
    ...routeView(names).columns.filter((c) => c.header === 'CREATED' || c.header === 'UPDATED'),
  ],
});

export const logView = (names: Map<number, string>): View<RouteLogEntry> => ({
  columns: [
    { header: 'AT', get: (e) => e.at },
    { header: 'METHOD', get: (e) => e.method },
    { header: 'PATH', get: (e) => e.path },
    { header: 'STATUS', get: (e) => e.status },
    { header: 'MS', get: (e) => e.durationMs },
    { header: 'CLIENT', get: (e) => e.clientIp },
    { header: 'ERROR', get: (e) => e.error },
    { header: 'ID', get: (e) => e.id, wide: true },
    { header: 'IN', get: (e) => e.bytesIn, wide: true },
    { header: 'OUT', get: (e) => e.bytesOut, wide: true },
    { header: 'AGENT', get: (e) => nameOf(names, e.agentId), wide: true },
    { header: 'POD', get: (e) => e.podId, wide: true },
  ],
});

/** Agents by id or name, with one list call for all the names. */
function agentIds(rt: Runtime, refs: string[]): Promise<number[]> {
  let list: Promise<Agent[]> | undefined;
  const agents = () => (list ??= rt.client.call(ops.listAgents));
  return Promise.all(refs.map((ref) => resolveRef(ref, 'agent', agents, (a) => a.name)));
}

const routeId = (rt: Runtime, ref: string) =>
  resolveRef(
    ref,
    'route',
    () => rt.client.call(ops.listRoutes),
    (r) => r.name,
  );

interface RouteFlags extends AccessFlags, PoolFlags {
  type?: string;
  target?: string;
  hostname?: string;
  pathPrefix?: string;
  listenPort?: string;
  enabled?: boolean;
  allowEncodedSlashes?: boolean;
}

function withRouteFlags(cmd: Command): Command {
  return withPoolFlags(withAccessFlags(cmd))
    .option('--type <type>', 'HTTP or TCP')
    .option('--target <target>', 'HTTP: http(s):// URL seen from the agent; TCP: host:port')
    .option('--hostname <host>', 'HTTP: Host to match')
    .option('--path-prefix <prefix>', 'HTTP: path prefix to match (default /)')
    .option('--listen-port <port>', 'TCP: port the daemon listens on')
    .option('--allow-encoded-slashes', 'HTTP: forward paths holding %2F or %5C (refused with 400 by default)')
    .option('--no-allow-encoded-slashes', 'HTTP: refuse paths holding %2F or %5C again')
    .option('--enabled', 'enable the route')
    .option('--disabled', 'disable the route');
}

async function bodyOf(rt: Runtime, f: RouteFlags & { disabled?: boolean }, current?: Route): Promise<RouteUpdate> {
  checkHttpOnly(f, f.type ?? (current ? current.type : f.listenPort ? 'TCP' : 'HTTP'));
  // Every flag value is checked before the first request (the agents' names, the password prompt).
  const pool = f.agent ? parseAgents(f.agent) : undefined;
  const rules = poolBody(f, current);
  const body: RouteUpdate = { ...(await accessBody(f, current)), ...rules };
  if (f.type) body.type = f.type.toUpperCase() as 'HTTP' | 'TCP';
  if (pool) {
    const agents = await agentIds(
      rt,
      pool.map((a) => a.ref),
    );
    // One agent with the route's target is the seed's `agentId`; anything more is the pool.
    if (pool.length === 1 && pool[0].target === null) body.agentId = agents[0];
    else body.agents = pool.map((a, i) => ({ agentId: agents[i], target: a.target }));
  }
  if (f.target) body.target = f.target;
  if (f.hostname) body.hostname = f.hostname;
  if (f.pathPrefix) body.pathPrefix = f.pathPrefix;
  if (f.listenPort) {
    if (!/^\d+$/.test(f.listenPort)) throw new MonctlError('usage', '--listen-port must be a number', ExitCode.usage);
    body.listenPort = Number(f.listenPort);
  }
  if (f.allowEncodedSlashes !== undefined) body.allowEncodedSlashes = f.allowEncodedSlashes;
  if (f.enabled) body.enabled = true;
  if (f.disabled) body.enabled = false;
  return body;
}

export function register(program: Command): void {
  const routes = program.command('routes').description('tunnel routes and their access logs (ADMIN)');

  withOutput(routes.command('list').alias('ls').description('list routes')).action(
    act(async (rt) => {
      const [list, names] = await Promise.all([rt.client.call(ops.listRoutes), agentNames(rt)]);
      await rt.show(list, routeView(names));
    }),
  );

  withOutput(routes.command('get').description('show a route').argument('<route>', 'id or name')).action(
    act(async (rt, ref: string) => {
      const [route, names] = await Promise.all([rt.client.call(ops.getRoute, { params: { id: await routeId(rt, ref) } }), agentNames(rt)]);
      await rt.show(route, detailView(names));
      // The pool as a table of its own under the fields: one row per agent (json/yaml carry `pool`).
      if (!rt.structured) {
        process.stdout.write('\nPOOL\n');
        await rt.show(poolRows(route), poolView);
      }
    }),
  );

  withOutput(withRouteFlags(routes.command('add').description('create a route').argument('<name>'))).action(
    act(async (rt, name: string, f: RouteFlags) => {
      if (!f.agent || !f.target) throw new MonctlError('usage', 'routes add needs --agent and --target', ExitCode.usage);
      // A listen port means TCP unless said otherwise.
      const body = { name, type: f.listenPort ? 'TCP' : 'HTTP', ...(await bodyOf(rt, f)) } as RouteCreate;
      const route = await rt.client.call(ops.createRoute, { body });
      await rt.done(route, `Created route ${route.name} (id ${route.id}).`);
    }),
  );

  withOutput(
    withRouteFlags(
      routes.command('update').description('change a route (fields not given are kept)').argument('<route>', 'id or name'),
    ).option('--name <name>', 'rename'),
  ).action(
    act(async (rt, ref: string, f: RouteFlags & { name?: string }) => {
      const id = await routeId(rt, ref);
      // --basic-auth keeps the route's other users: their names come from the route as it is.
      // HTTP-only flags need its type, to refuse them on a TCP route before any prompt.
      // Header rules and health flags merge into the route's own.
      const current = wantsHttpOnly(f) || needsCurrent(f) ? await rt.client.call(ops.getRoute, { params: { id } }) : undefined;
      const body = await bodyOf(rt, f, current);
      if (f.name) body.name = f.name;
      if (Object.keys(body).length === 0) throw new MonctlError('usage', 'nothing to update: give at least one option', ExitCode.usage);
      const route = await rt.client.call(ops.updateRoute, { params: { id }, body });
      await rt.done(route, `Updated route ${route.name} (id ${route.id}).`);
    }),
  );

  registerRouteTest(routes);

  routes
    .command('rm')
    .description('delete a route')
    .argument('<route>', 'id or name')
    .option('-y, --yes', 'do not ask')
    .action(
      act(async (rt, ref: string, opts: { yes?: boolean }) => {
        const id = await routeId(rt, ref);
        await confirm(`Delete route ${ref}`, opts.yes);
        await rt.client.call(ops.deleteRoute, { params: { id } });
        process.stdout.write(`Deleted route ${ref}.\n`);
      }),
    );

  withOutput(routes.command('log').description('recent access log entries, newest first; --follow to watch live'))
    .argument('<route>', 'id or name')
    .option('--limit <n>', 'how many entries (1 to 1000)', '100')
    .option('--before <id>', 'entries older than this entry id')
    .option('-f, --follow', 'stream new entries (a live view on a terminal, NDJSON when piped)')
    .action(
      act(async (rt, ref: string, opts: { limit: string; before?: string; follow?: boolean }) => {
        const id = await routeId(rt, ref);
        if (opts.follow) {
          const { followRouteLog } = await import('../tui/route-log.tsx');
          return followRouteLog(rt, id);
        }
        const query = { limit: Number(opts.limit), ...(opts.before ? { before: Number(opts.before) } : {}) };
        // The AGENT column is in -o wide only.
        const [entries, names] = await Promise.all([
          rt.client.call(ops.getRouteLog, { params: { id }, query }),
          agentNames(rt, rt.format === 'wide'),
        ]);
        await rt.show(entries, logView(names));
      }),
    );
}
