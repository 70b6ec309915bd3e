import type { TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import {
  AFFINITIES,
  type Affinity,
  HeaderRules,
  MAX_POOL_AGENTS,
  POOL_POLICIES,
  type PoolPolicy,
  RouteHealthCheck,
} from '../../src/api/schemas/route-pools.ts';
import { RateLimit, ROUTE_AUTHS, type RouteAuth, type RouteSso, type RouteType } from '../../src/api/schemas/tunnel.ts';
import { didYouMean, fieldNames } from './fields.ts';
import { expandSecret } from './notifiers-spec.ts';
import { ssoSpec } from './routes-sso.ts';

/**
 * The `agents:` and `routes:` sections of an apply file (docs/API.md#agent-pools). Agents are
 * names only: apply creates them, never their tokens (`monctl agents token NAME` gives one). A
 * route names its pool by agent names, each with an optional target of its own; basic-auth
 * passwords are `${ENV_VAR}` references, as notifiers' secrets, sent on every apply (reads never
 * return them). Fields left out are not managed.
 */
export interface AgentSpec {
  name: string;
}
export interface RouteSpec {
  name: string;
  type: RouteType;
  /** The pool in order: agent names and their own targets (null: the route's). */
  agents: Array<{ name: string; target: string | null }>;
  target: string;
  policy?: PoolPolicy;
  affinity?: Affinity;
  hostname?: string;
  pathPrefix?: string;
  listenPort?: number;
  enabled?: boolean;
  allowEncodedSlashes?: boolean;
  auth?: RouteAuth;
  /** Usernames with their passwords expanded (undefined: the stored one is kept). */
  basicUsers?: Array<{ username: string; password?: string }>;
  ipAllow?: string[];
  ipDeny?: string[];
  rateLimit?: RateLimit | null;
  httpsRedirect?: boolean;
  /** `auth: oidc`: the whole rules (a list left out is empty), sessionTtl in seconds. */
  sso?: RouteSso | null;
  requestHeaders?: HeaderRules;
  responseHeaders?: HeaderRules;
  hostHeader?: string | null;
  preserveHost?: boolean;
  stripPrefix?: boolean;
  healthCheck?: RouteHealthCheck | null;
}

type Obj = Record<string, unknown>;
type Err = (path: string, msg: string) => void;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const NAME = /^[A-Za-z0-9._-]{1,64}$/;
/** Fields only an HTTP route has. */
const HTTP_ONLY = [
  'hostname',
  'pathPrefix',
  'allowEncodedSlashes',
  'basicUsers',
  'httpsRedirect',
  'sso',
  'requestHeaders',
  'responseHeaders',
  'hostHeader',
  'preserveHost',
  'stripPrefix',
] as const;

export function validateAgents(list: Obj[], err: Err): AgentSpec[] {
  return list.map((a, i) => {
    const p = `agents[${i}]`;
    for (const k of Object.keys(a))
      if (k !== 'name')
        err(
          `${p}.${k}`,
          `unknown field${k === 'token' ? ' (apply never manages tokens: monctl agents token NAME)' : didYouMean(k, ['name'])}`,
        );
    if (typeof a.name !== 'string' || !NAME.test(a.name)) err(`${p}.name`, 'must be 1 to 64 of A-Z a-z 0-9 . _ -');
    return { name: a.name as string };
  });
}

/** A value against one of the API's schemas; the first problem named by its path under `path`. */
function schema<T>(path: string, value: unknown, type: TSchema, err: Err): T | undefined {
  if (Value.Check(type, value)) return value as T;
  const first = Value.Errors(type, value).First();
  err(`${path}${first?.path ? first.path.replace(/\//g, '.') : ''}`, first?.message ?? 'is invalid');
  return undefined;
}

function poolOf(p: string, v: unknown, err: Err): RouteSpec['agents'] {
  if (!Array.isArray(v) || v.length === 0 || v.length > MAX_POOL_AGENTS) {
    err(`${p}.agents`, `must be a list of 1 to ${MAX_POOL_AGENTS} agents: names, or {name, target}`);
    return [];
  }
  const pool = v.map((a, j) => {
    const item = typeof a === 'string' ? { name: a } : isObj(a) ? a : {};
    for (const k of Object.keys(item)) if (k !== 'name' && k !== 'target') err(`${p}.agents[${j}].${k}`, 'unknown field (name, target)');
    if (typeof item.name !== 'string' || !NAME.test(item.name)) err(`${p}.agents[${j}].name`, 'must be an agent name');
    const target = item.target ?? null;
    if (target !== null && (typeof target !== 'string' || target.trim() === ''))
      err(`${p}.agents[${j}].target`, 'must be a string or null');
    return { name: item.name as string, target: target as string | null };
  });
  pool.forEach((a, j) => {
    if (pool.findIndex((b) => b.name === a.name) !== j) err(`${p}.agents[${j}].name`, `agent "${a.name}" is in the pool twice`);
  });
  return pool;
}

export function validateRoutes(list: Obj[], err: Err, env: NodeJS.ProcessEnv = process.env): RouteSpec[] {
  return list.map((r, i) => {
    const p = `routes[${i}]`;
    const allowed = fieldNames('routes');
    for (const k of Object.keys(r)) if (!allowed.includes(k)) err(`${p}.${k}`, `unknown field${didYouMean(k, allowed)}`);
    if (typeof r.name !== 'string' || !NAME.test(r.name)) err(`${p}.name`, 'must be 1 to 64 of A-Z a-z 0-9 . _ -');
    const typeText = typeof r.type === 'string' ? r.type.toUpperCase() : r.listenPort !== undefined ? 'TCP' : 'HTTP';
    if (typeText !== 'HTTP' && typeText !== 'TCP') err(`${p}.type`, 'must be HTTP or TCP');
    const type = typeText as RouteType;
    const spec: RouteSpec = { name: r.name as string, type, agents: poolOf(p, r.agents, err), target: r.target as string };
    if (typeof r.target !== 'string' || r.target.trim() === '') err(`${p}.target`, 'is required: a string');
    else if (type === 'HTTP' && !/^https?:\/\/[^/\s]+/i.test(r.target)) err(`${p}.target`, 'must be an http(s) URL for HTTP');
    else if (type === 'TCP' && !/^(\[[0-9a-f:.]+\]|[^:\s]+):\d{1,5}$/i.test(r.target)) err(`${p}.target`, 'must be host:port for TCP');
    if (type === 'TCP') for (const k of HTTP_ONLY) if (r[k] !== undefined) err(`${p}.${k}`, 'only HTTP routes have it');
    if (type === 'HTTP' && r.listenPort !== undefined) err(`${p}.listenPort`, 'only TCP routes have it (type: TCP)');
    if (type === 'HTTP' && r.hostname === undefined) err(`${p}.hostname`, 'is required for HTTP');
    if (type === 'TCP' && r.listenPort === undefined) err(`${p}.listenPort`, 'is required for TCP');

    const str = (k: 'hostname' | 'pathPrefix', test: RegExp, msg: string) => {
      const v = r[k];
      if (v === undefined) return;
      if (typeof v !== 'string' || !test.test(v)) err(`${p}.${k}`, msg);
      else spec[k] = v;
    };
    str('hostname', /^(\*\.)?[A-Za-z0-9.:[\]-]{1,253}$/, 'must be a host name (or *.name)');
    str('pathPrefix', /^\/\S{0,1023}$/, 'must be a path starting with /');
    if (r.listenPort !== undefined) {
      if (!Number.isInteger(r.listenPort) || (r.listenPort as number) < 1 || (r.listenPort as number) > 65535)
        err(`${p}.listenPort`, 'must be a port number');
      else spec.listenPort = r.listenPort as number;
    }
    for (const k of ['enabled', 'allowEncodedSlashes', 'httpsRedirect', 'preserveHost', 'stripPrefix'] as const) {
      if (r[k] === undefined) continue;
      if (typeof r[k] !== 'boolean') err(`${p}.${k}`, 'must be true or false');
      else spec[k] = r[k] as boolean;
    }
    const enumOf = <T extends string>(k: 'policy' | 'affinity' | 'auth', values: readonly T[]): T | undefined => {
      if (r[k] === undefined) return undefined;
      const found = values.find((x) => typeof r[k] === 'string' && x.toLowerCase() === (r[k] as string).toLowerCase());
      if (!found) err(`${p}.${k}`, `must be one of ${values.join(', ')}`);
      return found;
    };
    spec.policy = enumOf('policy', POOL_POLICIES);
    spec.affinity = enumOf('affinity', AFFINITIES);
    spec.auth = enumOf('auth', ROUTE_AUTHS);
    for (const k of ['ipAllow', 'ipDeny'] as const) {
      const v = r[k];
      if (v === undefined) continue;
      if (!Array.isArray(v) || v.length > 1000 || v.some((c) => typeof c !== 'string' || c.trim() === ''))
        err(`${p}.${k}`, 'must be a list of addresses and CIDR blocks');
      else spec[k] = v as string[];
    }
    if (r.rateLimit !== undefined) {
      // `rateLimit: 10` is 10 a second with a burst of 10, as --rate-limit 10.
      const v = typeof r.rateLimit === 'number' ? { perSecond: r.rateLimit, burst: Math.max(1, Math.ceil(r.rateLimit)) } : r.rateLimit;
      spec.rateLimit = v === null ? null : schema<RateLimit>(`${p}.rateLimit`, v, RateLimit, err);
    }
    if (r.hostHeader !== undefined) {
      if (r.hostHeader !== null && (typeof r.hostHeader !== 'string' || !/^[A-Za-z0-9.:[\]-]{1,253}$/.test(r.hostHeader)))
        err(`${p}.hostHeader`, 'must be a host name or null');
      else spec.hostHeader = r.hostHeader as string | null;
    }
    if (spec.hostHeader && spec.preserveHost) err(`${p}.hostHeader`, 'set it or preserveHost, not both');
    for (const k of ['requestHeaders', 'responseHeaders'] as const) {
      if (r[k] === undefined) continue;
      // The schema refuses a name that is not an HTTP token (its record takes no other keys).
      spec[k] = schema<HeaderRules>(`${p}.${k}`, r[k], HeaderRules, err);
    }
    if (r.healthCheck !== undefined)
      spec.healthCheck = r.healthCheck === null ? null : schema<RouteHealthCheck>(`${p}.healthCheck`, r.healthCheck, RouteHealthCheck, err);
    if (r.basicUsers !== undefined) spec.basicUsers = basicUsers(`${p}.basicUsers`, r.basicUsers, err, env);
    if (spec.basicUsers?.length && spec.auth === undefined) spec.auth = 'basic';
    if (r.sso !== undefined) spec.sso = ssoSpec(`${p}.sso`, r.sso, err);
    if (spec.sso && spec.auth === undefined) spec.auth = 'oidc';
    return spec;
  });
}

/** `[{username, password: ${ENV}}]`; a user without password keeps the stored one. */
function basicUsers(p: string, v: unknown, err: Err, env: NodeJS.ProcessEnv): RouteSpec['basicUsers'] {
  if (!Array.isArray(v) || v.length > 100) {
    err(p, 'must be a list of {username, password}');
    return undefined;
  }
  return v.map((u, j) => {
    const item = isObj(u) ? u : {};
    for (const k of Object.keys(item))
      if (k !== 'username' && k !== 'password') err(`${p}[${j}].${k}`, 'unknown field (username, password)');
    if (typeof item.username !== 'string' || !/^[^:\u0000-\u001f]{1,64}$/.test(item.username))
      err(`${p}[${j}].username`, 'must be 1 to 64 characters, no colon');
    if (item.password === undefined) return { username: item.username as string };
    const secret = expandSecret(item.password, env);
    if ('error' in secret) err(`${p}[${j}].password`, secret.error);
    return { username: item.username as string, password: 'value' in secret ? secret.value : undefined };
  });
}
