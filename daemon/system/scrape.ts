import type { IncomingMessage, ServerResponse } from 'node:http';
import { unauthorized } from '../../src/errors.ts';
import { ANONYMOUS, resolvePrincipal } from '../auth/principal.ts';
import type { DaemonContext } from '../context.ts';
import { drained } from '../http/drained.ts';
import { yieldTurn } from '../util/yield-turn.ts';
import { visibleTo } from '../monitoring/visibility.ts';

/** A sample line's `resource_id` label (prom-client escapes `"` in values, so a value cannot fake it). */
const RESOURCE_LABEL = /[{,]resource_id="([^"]*)"/;

/**
 * Drops the samples of per-resource series (any metric with a `resource_id`
 * label, so a new per-resource metric is covered without a list to keep up)
 * whose resource `keep` refuses. HELP and TYPE lines stay: a metric without
 * samples is valid exposition format.
 */
export function filterResourceSeries(text: string, keep: (resourceId: string) => boolean): string {
  return text
    .split('\n')
    .filter((line) => {
      if (line.startsWith('#')) return true;
      const id = RESOURCE_LABEL.exec(line)?.[1];
      return id === undefined || keep(id);
    })
    .join('\n');
}

/** Ids of the resources an anonymous caller may see (the seed's rules: no group, or a PUBLIC one). */
async function publicResourceIds(ctx: DaemonContext): Promise<Set<string> | undefined> {
  try {
    const rows = await ctx.db.selectFrom('resources').select('id').where(visibleTo(ANONYMOUS)).execute();
    return new Set(rows.map((r) => String(r.id)));
  } catch (err) {
    ctx.log.warn({ err }, 'metrics: resource visibilities not read; per-resource series left out');
    return undefined; // fail closed: no per-resource series rather than all of them
  }
}

/**
 * `GET /actuator/prometheus`. `--metrics-auth key` wants any valid API key
 * (ADMIN or USER, in the usual headers) or a session; `--metrics-detail public`
 * keeps per-resource series of PUBLIC resources only, whoever scrapes.
 */
export async function serveMetrics(ctx: DaemonContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { detail, auth } = ctx.config.metrics;
  if (auth === 'key') {
    const principal = await resolvePrincipal(req, ctx.keys, ctx.sessions); // 401 for a wrong key
    if (principal.kind === 'anonymous') {
      throw unauthorized('Metrics need an API key (--metrics-auth key): send Authorization: Bearer <key>');
    }
  }
  const text = await ctx.metrics.registry.metrics();
  const ids = detail === 'public' ? await publicResourceIds(ctx) : undefined;
  const shown = (chunk: string) => (detail === 'public' ? filterResourceSeries(chunk, (id) => ids?.has(id) ?? false) : chunk);
  res.writeHead(200, { 'Content-Type': ctx.metrics.registry.contentType, 'Cache-Control': 'no-store' });
  res.write(shown(text));
  // The per-resource series a chunk at a time, yielding between chunks (checks keep their schedule) and waiting for a slow reader.
  for (const render of ctx.metrics.rendered) {
    for (const chunk of render()) {
      if (res.destroyed) return;
      if (res.write(shown(chunk))) await yieldTurn();
      else await drained(res);
    }
  }
  res.end();
}
