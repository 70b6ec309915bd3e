import type { Command } from 'commander';
import { AFFINITIES, type HeaderRules, POOL_POLICIES, type RouteHealthCheck } from '../../src/api/schemas/route-pools.ts';
import type { Route, RouteUpdate } from '../../src/api/schemas/tunnel.ts';
import { usage } from '../../src/errors.ts';
import { MAX_CONDITION_LENGTH, MAX_CONDITIONS } from '../../src/probes/conditions/types.ts';
import { parseGoDuration } from '../../src/probes/conditions/go-values.ts';
import { HTTP_METHODS } from '../../src/probes/types.ts';
import { offerValues } from './completion-values.ts';
import { collect, collectList, HEADER_NAME, isStatusRange } from './http-check-flags.ts';

/**
 * The pool, header-rule and health-check flags of `routes add|update` (docs/API.md#agent-pools,
 * docs/API.md#header-and-path-rules). Every value is checked here, before any request, so a bad one
 * is a usage error naming its flag; the agents' names are resolved by the caller (one list call).
 */
export interface PoolFlags {
  /** `NAME` or `NAME=TARGET`, in pool order. */
  agent?: string[];
  policy?: string;
  affinity?: string;
  setHeader?: string[];
  removeHeader?: string[];
  setResponseHeader?: string[];
  removeResponseHeader?: string[];
  /** `--no-header-rules` (update): false. */
  headerRules?: boolean;
  hostHeader?: string | false;
  preserveHost?: boolean;
  stripPrefix?: boolean;
  healthPath?: string;
  healthMethod?: string;
  healthInterval?: string;
  healthTimeout?: string;
  healthExpect?: string[];
  healthCondition?: string[];
  healthUnhealthyAfter?: string;
  healthHealthyAfter?: string;
  /** `--no-health-check`: false. */
  healthCheck?: boolean;
}

export function withPoolFlags(cmd: Command): Command {
  cmd
    .option(
      '--agent <agent[=target]>',
      "an agent of the pool, by id or name, in pool order (repeatable); =TARGET: that agent's own target",
      collect,
    )
    .option('--policy <policy>', `how requests spread over the pool: ${POOL_POLICIES.join(', ')} (default round-robin)`)
    .option('--affinity <affinity>', `HTTP: ${AFFINITIES.join(' or ')} (client-ip: one client IP keeps its agent)`)
    .option('--set-header <"Name: value">', 'HTTP: set this request header, replacing what the client sent (repeatable)', collect)
    .option('--remove-header <name>', 'HTTP: remove this request header (repeatable)', collect)
    .option('--set-response-header <"Name: value">', "HTTP: set this response header, replacing the target's (repeatable)", collect)
    .option('--remove-response-header <name>', 'HTTP: remove this response header (repeatable)', collect)
    .option('--no-header-rules', 'HTTP: drop the request and response header rules (before the ones given with it)')
    .option('--host-header <name>', "HTTP: the Host the target gets (default: the target URL's host)")
    .option('--no-host-header', "HTTP: the target URL's host again")
    .option('--preserve-host', "HTTP: pass the client's Host to the target")
    .option('--no-preserve-host', "HTTP: the target URL's host (or --host-header) again")
    .option('--strip-prefix', "HTTP: remove the route's path prefix before forwarding")
    .option('--no-strip-prefix', 'HTTP: forward the whole path again')
    .option('--health-path <path>', "HTTP: check each agent's target on this path (default /); any --health-* flag adds a check")
    .option('--health-method <method>', `HTTP: the check's method, ${HTTP_METHODS.join(', ')} (default GET)`)
    .option('--health-interval <duration>', 'time between checks: 10s, 1m, or seconds, 1 to 3600 (default 10s)')
    .option('--health-timeout <duration>', 'how long a check may take: 5s, or seconds, 1 to 120 (default 5s)')
    .option('--health-expect <codes>', 'HTTP: the healthy statuses: 200,204,200-299 (repeatable; default 200-299)', collectList)
    .option('--health-condition <condition>', "a condition as a resource's: '[BODY].status == UP' (repeatable)", collect)
    .option('--health-unhealthy-after <n>', 'failed checks in a row before an agent leaves the rotation, 1 to 10 (default 1)')
    .option('--health-healthy-after <n>', 'passed checks in a row before it returns, 1 to 10 (default 1)')
    .option('--no-health-check', 'no health check: every connected agent is in the rotation');
  offerValues(cmd, '--policy', POOL_POLICIES);
  offerValues(cmd, '--affinity', AFFINITIES);
  return offerValues(cmd, '--health-method', HTTP_METHODS);
}

/** The pool as the flags give it: agent references (resolved by the caller) and their own targets. */
export function parseAgents(items: string[]): Array<{ ref: string; target: string | null }> {
  const pool = items.map((item) => {
    const eq = item.indexOf('=');
    const ref = (eq < 0 ? item : item.slice(0, eq)).trim();
    const target = eq < 0 ? null : item.slice(eq + 1).trim();
    if (!ref) usage(`--agent takes NAME or NAME=TARGET, not "${item}"`);
    if (target === '') usage(`--agent ${ref}=: the target after = is empty (leave out = for the route's target)`);
    return { ref, target };
  });
  const twice = pool.find((a, i) => pool.findIndex((b) => b.ref === a.ref) !== i);
  if (twice) usage(`--agent ${twice.ref} is given twice: an agent is in a pool once`);
  if (pool.length > 16) usage('--agent: a pool holds at most 16 agents');
  return pool;
}

/** The value as the API spells it, whatever the case typed (`--policy Failover`, `--health-method head`). */
const oneOf = <T extends string>(flag: string, text: string, values: readonly T[]): T => {
  const v = values.find((x) => x.toLowerCase() === text.toLowerCase());
  if (v === undefined) usage(`${flag} must be one of ${values.join(', ')}, not "${text}"`);
  return v;
};

function headerName(flag: string, name: string): string {
  if (!HEADER_NAME.test(name)) usage(`${flag} needs a header name (letters, digits and !#$%&'*+.^_\`|~-), not "${name}"`);
  return name;
}

/** `Name: value` (the value may be empty). */
function headerPair(flag: string, text: string): [string, string] {
  const colon = text.indexOf(':');
  if (colon < 1) usage(`${flag} takes "Name: value", not "${text}"`);
  const value = text.slice(colon + 1).trim();
  if (/[\r\n\0]/.test(value)) usage(`${flag} ${text.slice(0, colon)}: the value must not hold CR, LF or NUL`);
  return [headerName(flag, text.slice(0, colon).trim()), value];
}

/**
 * One direction's rules: the current ones (update), then the flags. Setting a name drops its removal
 * and removing one drops its setting, so the last word on a name is the flags'.
 */
function rulesOf(current: HeaderRules, set: string[], remove: string[], flags: [string, string]): HeaderRules | undefined {
  if (set.length === 0 && remove.length === 0) return undefined;
  const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();
  let setMap = { ...(current.set ?? {}) };
  let removed = [...(current.remove ?? [])];
  for (const pair of set) {
    const [name, value] = headerPair(flags[0], pair);
    setMap = Object.fromEntries(Object.entries(setMap).filter(([n]) => !same(n, name)));
    setMap[name] = value;
    removed = removed.filter((n) => !same(n, name));
  }
  for (const raw of remove) {
    const name = headerName(flags[1], raw.trim());
    setMap = Object.fromEntries(Object.entries(setMap).filter(([n]) => !same(n, name)));
    if (!removed.some((n) => same(n, name))) removed.push(name);
  }
  if (Object.keys(setMap).length > 32 || removed.length > 32) usage(`${flags[0]} and ${flags[1]}: at most 32 headers each`);
  return { ...(Object.keys(setMap).length ? { set: setMap } : {}), ...(removed.length ? { remove: removed } : {}) };
}

/** `10s`, `1m` or a number of seconds, whole, within [min, max]. */
export function seconds(flag: string, text: string, min: number, max: number): number {
  const ms = /^\d+$/.test(text) ? Number(text) * 1000 : parseGoDuration(text);
  if (ms === null || ms % 1000 !== 0 || ms < min * 1000 || ms > max * 1000)
    usage(`${flag} must be a duration of whole seconds from ${min}s to ${max}s (10s, 1m, 30), not "${text}"`);
  return ms / 1000;
}

function count(flag: string, text: string): number {
  if (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > 10) usage(`${flag} must be a whole number from 1 to 10, not "${text}"`);
  return Number(text);
}

const HEALTH_FLAGS = [
  'healthPath',
  'healthMethod',
  'healthInterval',
  'healthTimeout',
  'healthExpect',
  'healthCondition',
  'healthUnhealthyAfter',
  'healthHealthyAfter',
] as const;

/** The health check the flags make, over the current one on update; undefined when no health flag is given. */
function healthOf(f: PoolFlags, current: RouteHealthCheck | null): RouteHealthCheck | null | undefined {
  const given = HEALTH_FLAGS.filter((k) => f[k] !== undefined);
  if (f.healthCheck === false) {
    if (given.length) usage('--no-health-check goes without the other --health-* flags');
    return null;
  }
  if (given.length === 0) return undefined;
  const h: RouteHealthCheck = { ...(current ?? {}) };
  if (f.healthPath !== undefined) {
    if (!/^\/[^\s#]*$/.test(f.healthPath) || f.healthPath.length > 2048)
      usage(`--health-path must be a path starting with / (no spaces or #), not "${f.healthPath}"`);
    h.path = f.healthPath;
  }
  if (f.healthMethod !== undefined) h.method = oneOf('--health-method', f.healthMethod, HTTP_METHODS);
  if (f.healthInterval !== undefined) h.intervalSeconds = seconds('--health-interval', f.healthInterval, 1, 3600);
  if (f.healthTimeout !== undefined) h.timeoutSeconds = seconds('--health-timeout', f.healthTimeout, 1, 120);
  if (f.healthExpect !== undefined) {
    const bad = f.healthExpect.find((s) => !isStatusRange(s));
    if (bad !== undefined) usage(`--health-expect takes status codes (100 to 599) and ranges like 200-299, not "${bad}"`);
    if (f.healthExpect.length === 0 || f.healthExpect.length > 32) usage('--health-expect takes 1 to 32 codes and ranges');
    h.expectStatus = f.healthExpect;
  }
  if (f.healthCondition !== undefined) {
    const bad = f.healthCondition.find((c) => c.trim() === '' || c.length > MAX_CONDITION_LENGTH);
    if (bad !== undefined) usage(`--health-condition must be a condition of 1 to ${MAX_CONDITION_LENGTH} characters, not "${bad}"`);
    if (f.healthCondition.length > MAX_CONDITIONS) usage(`--health-condition: at most ${MAX_CONDITIONS} conditions`);
    h.conditions = f.healthCondition;
  }
  if (f.healthUnhealthyAfter !== undefined) h.unhealthyAfter = count('--health-unhealthy-after', f.healthUnhealthyAfter);
  if (f.healthHealthyAfter !== undefined) h.healthyAfter = count('--health-healthy-after', f.healthHealthyAfter);
  return h;
}

/** Whether `routes update` needs the route as it is to merge the flags into (header rules, health check). */
export const needsCurrent = (f: PoolFlags) =>
  [f.setHeader, f.removeHeader, f.setResponseHeader, f.removeResponseHeader].some((x) => x?.length) ||
  HEALTH_FLAGS.some((k) => f[k] !== undefined);

/**
 * The body fields of the pool flags but the agents (which need names resolved): checked whole, before
 * any request. `current` (update) is what header rules and health flags merge into.
 */
export function poolBody(f: PoolFlags, current?: Route): RouteUpdate {
  const body: RouteUpdate = {};
  if (f.policy !== undefined) body.policy = oneOf('--policy', f.policy, POOL_POLICIES);
  if (f.affinity !== undefined) body.affinity = oneOf('--affinity', f.affinity, AFFINITIES);
  const drop = f.headerRules === false;
  const base = (rules: HeaderRules | undefined) => (drop || !rules ? {} : rules);
  const req = rulesOf(base(current?.requestHeaders), f.setHeader ?? [], f.removeHeader ?? [], ['--set-header', '--remove-header']);
  const res = rulesOf(base(current?.responseHeaders), f.setResponseHeader ?? [], f.removeResponseHeader ?? [], [
    '--set-response-header',
    '--remove-response-header',
  ]);
  if (req || drop) body.requestHeaders = req ?? {};
  if (res || drop) body.responseHeaders = res ?? {};
  if (typeof f.hostHeader === 'string') {
    if (f.preserveHost === true) usage('give --host-header or --preserve-host, not both');
    if (!/^[A-Za-z0-9.:[\]-]{1,253}$/.test(f.hostHeader)) usage(`--host-header must be a host name, not "${f.hostHeader}"`);
    // One replaces the other: the daemon refuses both at once.
    Object.assign(body, { hostHeader: f.hostHeader, preserveHost: false });
  } else if (f.hostHeader === false) body.hostHeader = null;
  if (f.preserveHost === true) Object.assign(body, { preserveHost: true, hostHeader: null });
  else if (f.preserveHost === false) body.preserveHost = false;
  if (f.stripPrefix !== undefined) body.stripPrefix = f.stripPrefix;
  const health = healthOf(f, current?.healthCheck ?? null);
  if (health !== undefined) body.healthCheck = health;
  return body;
}
