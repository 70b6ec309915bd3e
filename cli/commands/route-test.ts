import { isIP } from 'node:net';
import type { Command } from 'commander';
import type { RouteMatch } from '../../src/api/schemas/route-pools.ts';
import { ExitCode, usage } from '../../src/errors.ts';
import { ops } from '../api/ops.ts';
import { act, withOutput } from '../runtime.ts';

/** `example.com/api/x` → host and path; a scheme (`https://`) is allowed and ignored, as a pasted URL would have one. */
export function splitTarget(text: string): { host: string; path: string } {
  const bare = text.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '');
  const slash = bare.indexOf('/');
  const host = slash < 0 ? bare : bare.slice(0, slash);
  const path = slash < 0 ? '/' : bare.slice(slash);
  if (!host || host.length > 253 || /[\s@]/.test(host)) usage(`routes test takes HOST[/PATH] (e.g. app.example.com/api), not "${text}"`);
  if (path.length > 2048) usage('routes test: the path is longer than 2048 characters');
  return { host, path };
}

/**
 * `monctl routes test HOST[/PATH]`: the route and agent a request would take now, and why
 * (GET /admin/api/route-match, docs/API.md#routes). Nothing is sent to an agent. No route
 * matching is exit code notFound, so that scripts can test a hostname's coverage.
 */
export function registerRouteTest(routes: Command): void {
  withOutput(
    routes
      .command('test')
      .description('which route and agent a request to HOST[/PATH] would take now, and why (exit 3 when no route matches)')
      .argument('<host[/path]>', 'the Host and path of the request, e.g. app.example.com/api/x')
      .option('--client-ip <ip>', "the client's address, for affinity and IP rules"),
  ).action(
    act(async (rt, target: string, opts: { clientIp?: string }) => {
      const { host, path } = splitTarget(target);
      if (opts.clientIp !== undefined && !isIP(opts.clientIp)) usage(`--client-ip must be an IPv4 or IPv6 address, not "${opts.clientIp}"`);
      const query = { host, path, ...(opts.clientIp ? { clientIp: opts.clientIp } : {}) };
      const match = await rt.client.call(ops.matchRoute, { query });
      if (match.routeId === null) process.exitCode = ExitCode.notFound;
      if (rt.structured) return rt.show(match);
      process.stdout.write(describeMatch(match, host, path));
    }),
  );
}

export function describeMatch(m: RouteMatch, host: string, path: string): string {
  const lines =
    m.routeId === null
      ? [`No route matches ${host}${path}.`]
      : [
          `Route: ${m.routeName ?? '-'} (id ${m.routeId})`,
          `Agent: ${m.agentId === null ? 'none in the rotation' : `${m.agentName ?? '-'} (id ${m.agentId})`}`,
          ...(m.forwardPath === null ? [] : [`Forwarded path: ${m.forwardPath}`]),
        ];
  lines.push('Why:', ...m.reasons.map((r) => `  - ${r}`));
  return `${lines.join('\n')}\n`;
}
