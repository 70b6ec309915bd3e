import type { RouteHealthCheck } from '../../../src/api/schemas/route-pools.ts';
import type { HttpRequestSpec } from '../../../src/probes/types.ts';
import type { RemoteCheck } from '../../../src/tunnel/probe-protocol.ts';
import type { DaemonConfig } from '../../config.ts';
import { statusRange } from '../../tunnel-admin/health-check-rules.ts';

/** A route's health check with its defaults (docs/API.md#agent-pools). */
export interface HealthSpec {
  intervalMs: number;
  timeoutMs: number;
  unhealthyAfter: number;
  healthyAfter: number;
  check: RouteHealthCheck;
}

export function healthSpecOf(check: RouteHealthCheck): HealthSpec {
  return {
    intervalMs: (check.intervalSeconds ?? 10) * 1000,
    timeoutMs: (check.timeoutSeconds ?? 5) * 1000,
    unhealthyAfter: check.unhealthyAfter ?? 1,
    healthyAfter: check.healthyAfter ?? 1,
    check,
  };
}

/**
 * The URL an HTTP route's check asks: the member's target with `path` put after the target's own
 * path, as the edge forwards a request for `path` (`http://app:8080/base` and `/health` check
 * `http://app:8080/base/health`).
 */
export function healthUrl(target: string, path = '/'): string {
  const url = new URL(target);
  const base = url.pathname.endsWith('/') ? url.pathname.slice(0, -1) : url.pathname;
  const [pathname, query] = path.split(/\?(.*)/s, 2);
  url.pathname = `${base}${pathname}`;
  url.search = query === undefined ? '' : `?${query}`;
  return url.toString();
}

/**
 * The check an agent is sent for one member: the monitoring engine's HTTP check (its request and
 * expected statuses only when the route sets them, so a plain check reads as a resource's) or, for
 * a TCP route, a connect; the route's own timeout and conditions, the daemon's defaults otherwise.
 */
export function remoteHealthCheck(
  type: 'HTTP' | 'TCP',
  spec: HealthSpec,
  target: string,
  probes: Pick<DaemonConfig['probes'], 'httpTimeoutMs' | 'maxBodyBytes'>,
): RemoteCheck {
  const { check } = spec;
  const remote: RemoteCheck = {
    type,
    target: type === 'HTTP' ? healthUrl(target, check.path) : target,
    skipTLS: false,
    recursive: false,
    timeoutMs: probes.httpTimeoutMs,
    maxBodyBytes: probes.maxBodyBytes,
    checkTimeoutMs: spec.timeoutMs,
  };
  if (check.conditions?.length) remote.conditions = check.conditions;
  if (type === 'HTTP' && (check.method || check.headers || check.expectStatus)) remote.http = httpOf(check);
  return remote;
}

function httpOf(check: RouteHealthCheck): HttpRequestSpec {
  const ranges = (check.expectStatus ?? []).map(statusRange).filter((r) => r !== null);
  return {
    method: check.method ?? 'GET',
    headers: Object.entries(check.headers ?? {}),
    body: null,
    contentType: null,
    auth: null,
    clientCert: null,
    followRedirects: true,
    expectStatus: ranges.length ? ranges : null,
  };
}
