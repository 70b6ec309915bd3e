import type { HeaderRules, PoolMember, RouteHealthCheck } from '../../src/api/schemas/route-pools.ts';
import type { Route } from '../../src/api/schemas/tunnel.ts';
import type { Column, View } from '../output/render.ts';

/** How `routes list|get` show a route's pool, rules and health check (docs/API.md#agent-pools). */

/** `web-1,web-2 +2`: the first two agents by name, and how many more. */
export function poolCell(r: Route, names: Map<number, string>): string {
  const all = r.agents.map((a) => String(names.get(a.agentId) ?? a.agentId));
  return all.length <= 2 ? all.join(',') : `${all.slice(0, 2).join(',')} +${all.length - 2}`;
}

/** `set X-A: 1; remove X-B`, or `-`. */
export function rulesCell(rules: HeaderRules): string {
  const parts = [...Object.entries(rules.set ?? {}).map(([n, v]) => `set ${n}: ${v}`), ...(rules.remove ?? []).map((n) => `remove ${n}`)];
  return parts.length ? parts.join('; ') : '-';
}

/** `GET /healthz every 10s, timeout 5s, expect 200-299, [BODY].ok == true`, or `-`. */
export function healthCell(h: RouteHealthCheck | null, type: Route['type']): string {
  if (!h) return '-';
  const what = type === 'TCP' ? 'connect' : `${h.method ?? 'GET'} ${h.path ?? '/'}`;
  const parts = [`${what} every ${h.intervalSeconds ?? 10}s`, `timeout ${h.timeoutSeconds ?? 5}s`];
  if (type === 'HTTP') parts.push(`expect ${(h.expectStatus ?? ['200-299']).join(',')}`);
  if (h.headers && Object.keys(h.headers).length) parts.push(`headers ${Object.keys(h.headers).join(',')}`);
  if (h.conditions?.length) parts.push(...h.conditions);
  if ((h.unhealthyAfter ?? 1) !== 1 || (h.healthyAfter ?? 1) !== 1)
    parts.push(`out after ${h.unhealthyAfter ?? 1} failed, back after ${h.healthyAfter ?? 1} passed`);
  return parts.join(', ');
}

/** The Host the target gets. */
export const hostCell = (r: Route) => (r.type !== 'HTTP' ? '-' : r.preserveHost ? "client's" : (r.hostHeader ?? "target's"));

/** The detail lines a route's pool fields add to `routes get` (the pool itself is a table of its own). */
export const poolDetailColumns: Column<Route>[] = [
  { header: 'POLICY', get: (r) => r.policy },
  { header: 'AFFINITY', get: (r) => (r.type === 'HTTP' ? r.affinity : '-') },
  { header: 'HEALTH-CHECK', get: (r) => healthCell(r.healthCheck, r.type) },
  { header: 'REQUEST-HEADERS', get: (r) => (r.type === 'HTTP' ? rulesCell(r.requestHeaders) : '-') },
  { header: 'RESPONSE-HEADERS', get: (r) => (r.type === 'HTTP' ? rulesCell(r.responseHeaders) : '-') },
  { header: 'HOST-HEADER', get: hostCell },
  { header: 'STRIP-PREFIX', get: (r) => (r.type === 'HTTP' ? r.stripPrefix : '-') },
];

export interface PoolRow extends PoolMember {
  target: string;
  /** This agent's part of the requests the pool sent on this pod, in percent (null: none sent yet). */
  share: number | null;
}

/** The pool's members with their own targets and their shares of the requests. */
export function poolRows(r: Route): PoolRow[] {
  const members = r.pool ?? [];
  const total = members.reduce((sum, m) => sum + m.requests, 0);
  return members.map((m) => ({
    ...m,
    target: r.agents.find((a) => a.agentId === m.agentId)?.target ?? r.target,
    share: total ? Math.round((m.requests / total) * 1000) / 10 : null,
  }));
}

export const poolView: View<PoolRow> = {
  columns: [
    { header: 'AGENT', get: (m) => m.name },
    { header: 'CONNECTED', get: (m) => m.connected },
    { header: 'HEALTH', get: (m) => m.health, status: true },
    { header: 'IN-ROTATION', get: (m) => m.inRotation },
    { header: 'IN-FLIGHT', get: (m) => m.inFlight },
    { header: 'REQUESTS', get: (m) => m.requests },
    { header: 'SHARE', get: (m) => (m.share === null ? '-' : `${m.share}%`) },
    { header: 'TARGET', get: (m) => m.target },
    { header: 'CHECKED', get: (m) => m.healthCheckedAt, wide: true },
    { header: 'HEALTH-ERROR', get: (m) => m.healthError, wide: true },
  ],
};
