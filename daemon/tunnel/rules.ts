import type { HeaderRules } from '../../src/api/schemas/route-pools.ts';
import { EDGE_HEADERS } from '../tunnel-admin/route-pool.ts';

/**
 * Header and path rules of HTTP routes (docs/API.md#header-and-path-rules), compiled once per route
 * when the route table loads: a request does no parsing of the rules, and a route without rules
 * pays one property check per hook (the edge's CPU per request is benchmarked).
 */

/** The rules as the route stores them. */
export interface RuleSource {
  requestHeaders: HeaderRules;
  responseHeaders: HeaderRules;
  hostHeader: string | null;
  preserveHost: boolean;
  stripPrefix: boolean;
}

/** One direction's header rules, ready to apply; null when the route has none in that direction. */
export interface CompiledHeaders {
  /** Lowercased names whose received values go: the removed ones and the set ones (set replaces). */
  drop: Set<string>;
  /** name (as configured), lowercased name, value. */
  set: Array<[string, string, string]>;
}

/** What an HTTP route changes in the messages it forwards: the stored rules and their compiled form. */
export interface LiveRules extends RuleSource {
  request: CompiledHeaders | null;
  response: CompiledHeaders | null;
  /** The prefix to cut off forwarded paths (without its trailing slash); null: the path goes as it is. */
  strip: string | null;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** A value that could end the header line (the API's schema refuses these too). */
const UNSAFE_VALUE = /[\r\n\0]/;

/**
 * One direction's rules, compiled. Names a rule never touches are skipped whatever the store holds:
 * the framing and hop-by-hop headers are the edge's and the tunnel's (a Content-Length or
 * Transfer-Encoding of a rule would desynchronise the message), and Host has hostHeader/preserveHost.
 * The API refuses them already (route-pool.ts); this holds for rows written some other way.
 */
function compileHeaders(rules: HeaderRules | undefined): CompiledHeaders | null {
  const drop = new Set<string>();
  const set: Array<[string, string, string]> = [];
  for (const name of rules?.remove ?? []) {
    const lower = name.toLowerCase();
    if (TOKEN.test(name) && !EDGE_HEADERS.has(lower)) drop.add(lower);
  }
  for (const [name, value] of Object.entries(rules?.set ?? {})) {
    const lower = name.toLowerCase();
    if (!TOKEN.test(name) || EDGE_HEADERS.has(lower) || typeof value !== 'string' || UNSAFE_VALUE.test(value)) continue;
    drop.add(lower);
    set.push([name, lower, value]);
  }
  return drop.size === 0 ? null : { drop, set };
}

/** The live form of a route's rules (route-table.ts calls it once per route and load). */
export function compileRules(source: RuleSource, pathPrefix: string): LiveRules {
  const prefix = source.stripPrefix ? pathPrefix.replace(/\/$/, '') : '';
  return {
    requestHeaders: source.requestHeaders,
    responseHeaders: source.responseHeaders,
    hostHeader: source.hostHeader,
    preserveHost: source.preserveHost,
    stripPrefix: source.stripPrefix,
    request: compileHeaders(source.requestHeaders),
    response: compileHeaders(source.responseHeaders),
    strip: prefix === '' ? null : prefix,
  };
}

/** What the hooks need of a route: its rules (route-table.ts imports this file, not the reverse). */
interface Ruled {
  rules: LiveRules;
}

/** A route without rules (tests and routes built by hand). */
export const NO_RULES: LiveRules = compileRules(
  { requestHeaders: {}, responseHeaders: {}, hostHeader: null, preserveHost: false, stripPrefix: false },
  '/',
);

/**
 * The path (and query) the target gets, before the target URL's base path is put in front:
 * with stripPrefix, without the route's prefix, cut at a segment boundary only
 * (`/api` on `/api` → `/`, on `/api/x?q` → `/x?q`, never on `/apix`).
 */
export function forwardPath(route: Ruled, path: string): string {
  const strip = route.rules.strip;
  if (strip === null || !path.startsWith(strip)) return path;
  const next = path.charCodeAt(strip.length);
  if (Number.isNaN(next)) return '/';
  if (next === 0x2f /* / */) return path.slice(strip.length);
  if (next === 0x3f /* ? */) return `/${path.slice(strip.length)}`;
  return path;
}

/**
 * The request headers (lowercased names, as forward.ts builds them) after the route's request rules.
 * A copy rather than `delete`s, which turn the object into a slow dictionary: the rules cost about
 * 230 ns of CPU per request so, 500 ns with deletes (docs/DECISIONS.md#header-and-path-rules).
 */
export function applyRequestRules<T extends Record<string, unknown>>(rules: CompiledHeaders, headers: T): T {
  const out: Record<string, unknown> = {};
  for (const name in headers) if (!rules.drop.has(name)) out[name] = headers[name];
  for (const [, lower, value] of rules.set) out[lower] = value;
  return out as T;
}

/** The response's raw header list ([name, value, …]) as the client gets it. */
export function responseHeaders(route: Ruled, raw: string[]): string[] {
  const rules = route.rules.response;
  if (rules === null) return raw;
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) if (!rules.drop.has(raw[i].toLowerCase())) out.push(raw[i], raw[i + 1]);
  for (const [name, , value] of rules.set) out.push(name, value);
  return out;
}
