import type { IncomingMessage } from 'node:http';
import { HttpError } from '../../src/errors.ts';
import type { EdgeGate } from './access/gate.ts';
import { SSO_PATH } from './access/sso-gate.ts';
import { normalisePath } from '../util/path-normalise.ts';
import type { LiveRoute, RouteTable } from './route-table.ts';

/** What the edge makes of a request's target before forwarding it. */
export type Routing =
  | {
      route: LiveRoute;
      /** The host the request is for (the absolute-form authority, else the Host header). */
      host: string | undefined;
      /** The normalised path and the query string as received: what the target gets after its base path. */
      forward: string;
      /** The path as the client sent it, without the query (for the access log). */
      logPath: string;
    }
  /** Refused: 400 or 404, or by the route's access control. With `route` when the route is known (the refusal goes to its access log). */
  | { error: HttpError; route?: LiveRoute; logPath: string };

interface ParsedTarget {
  host: string | undefined;
  path: string;
  query: string;
}

const ABSOLUTE = /^https?:\/\//i;

/**
 * Origin-form (`/x?y`) or absolute-form (`http://host/x?y`, RFC 9112 section
 * 3.2.2: its authority wins over the Host header). Anything else is refused.
 */
export function parseRequestTarget(url: string, hostHeader: string | undefined): ParsedTarget | { error: string } {
  let host = hostHeader;
  let rest = url;
  if (url.charCodeAt(0) !== 0x2f) {
    const scheme = ABSOLUTE.exec(url);
    if (!scheme) return { error: 'the request target must be a path or an absolute http URL' };
    const after = url.slice(scheme[0].length);
    const end = after.search(/[/?#]/);
    host = end < 0 ? after : after.slice(0, end);
    if (host === '') return { error: 'the absolute-form request target has no host' };
    if (host.includes('@')) return { error: 'the absolute-form request target carries user information' };
    rest = end < 0 ? '/' : after.slice(end);
    if (rest.charCodeAt(0) !== 0x2f) rest = `/${rest}`;
  }
  const q = rest.indexOf('?');
  return q < 0 ? { host, path: rest, query: '' } : { host, path: rest.slice(0, q), query: rest.slice(q) };
}

const refused = (detail: string) => new HttpError(400, 'bad-request-target', detail);

/**
 * Matches a request to a route on its normalised path (see util/path-normalise.ts).
 * A miss while routes reload waits for the reload (a just-created route is
 * served); otherwise the answer is synchronous (no promise per request).
 */
export function routeRequest(table: RouteTable, req: IncomingMessage, gate?: EdgeGate): Routing | Promise<Routing> {
  const target = parseRequestTarget(req.url ?? '/', req.headers.host);
  if ('error' in target) return { error: refused(target.error), logPath: '' };
  const logPath = target.path.slice(0, 2048);
  const normal = normalisePath(target.path);
  if ('error' in normal) return { error: refused(`Refused path: ${normal.error}`), logPath };
  const host = target.host;
  const found = (route: LiveRoute | undefined): Routing => {
    if (!route) return { error: new HttpError(404, 'no-route', `No route for host ${host ?? '(none)'} and path ${normal.path}`), logPath };
    if (normal.encodedSlash && !route.allowEncodedSlashes) {
      return { error: refused('Refused path: an encoded slash (%2F or %5C); the route does not allow them'), route, logPath };
    }
    return { route, host, forward: normal.path + target.query, logPath };
  };
  // Access control: the one place every edge request (and upgrade) passes before it is forwarded.
  const admit = (routing: Routing): Routing | Promise<Routing> => {
    if (!gate || 'error' in routing || routing.route.access.open) return routing;
    return gate
      .check(routing.route, req, host, routing)
      .then((refusal) => (refusal ? { error: refusal, route: routing.route, logPath } : routing));
  };
  const route = matchOrSignIn(table, host, normal.path);
  const loading = table.loading;
  if (!route && loading) return loading.then(() => admit(found(matchOrSignIn(table, host, normal.path))));
  return admit(found(route));
}

/**
 * The route of a request; on a hostname with a route behind sign-in, the sign-in's own paths
 * (`/.monctl/sso/…`) go to that route's gate whatever the path prefixes, never to a target.
 */
function matchOrSignIn(table: RouteTable, host: string | undefined, path: string): LiveRoute | undefined {
  if (path.startsWith(SSO_PATH)) {
    const signIn = host === undefined ? undefined : table.ruleOf(host)?.routes.find((r) => r.access.auth === 'oidc');
    if (signIn) return signIn;
  }
  return table.match(host, path);
}
