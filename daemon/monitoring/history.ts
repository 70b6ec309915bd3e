import type { resourceOperations } from '../../src/api/ops/resources.ts';
import { conflict, HttpError, notFound } from '../../src/errors.ts';
import type { RequestContext } from '../http/bind.ts';
import { toHistoryEntry } from './mappers.ts';
import { decide, type Quorum } from '../probes/locations.ts';
import { runRound } from '../probes/rounds.ts';
import { locationsOfOne } from '../probes/resource-locations.ts';
import { probeInputOf } from '../probes/probe-input.ts';
import { requestBox } from '../probes/http-request-store.ts';
import { recordResults } from '../probes/results.ts';
import { visibleTo } from './visibility.ts';
import { type Kysely, sql } from 'kysely';
import type { Database } from '../store/schema.ts';
import { PING_BODY_PREVIEW_BYTES } from '../../src/api/schemas/push.ts';
import { formatDateTime } from '../../src/time.ts';
import { COMPLETE_FROM_HEADER, completeFrom } from '../probes/history-kept.ts';

type Ops = typeof resourceOperations;

/**
 * `GET /api/resources/{id}/history`: most recent first, `limit` entries older
 * than `before`, and a `Link: rel="next"` header while more remain; `History-Complete-From` says
 * from when every check is kept (state changes alone before it). 404 for a
 * resource the caller may not see; ADMIN sees every resource's history.
 */
export async function getResourceHistory({ ctx, principal, params, query, res }: RequestContext<Ops['getResourceHistory']>) {
  let lookup = ctx.db.selectFrom('resources').select('id').where('id', '=', params.id);
  if (principal.kind !== 'user' || principal.role !== 'ADMIN') lookup = lookup.where(visibleTo(principal));
  if (!(await lookup.executeTakeFirst())) throw notFound(`Resource ${params.id} does not exist`);

  const admin = principal.kind === 'user' && principal.role === 'ADMIN';
  const [page, from] = await Promise.all([historyPage(ctx.db, params.id, query.before, query.limit + 1), completeFrom(ctx.db)]);
  res.setHeader(COMPLETE_FROM_HEADER, formatDateTime(from));
  const more = page.length > query.limit;
  if (more) page.pop();
  if (more && page.length) {
    const next = `/api/resources/${params.id}/history?limit=${query.limit}&before=${page[page.length - 1].id}`;
    res.setHeader('Link', `<${next}>; rel="next"`);
  }
  return page.map((row) => toHistoryEntry(row, admin));
}

/** One page of a resource's history, newest first: `limit` rows with ids below `before` (on the (resource_id, id) index). */
export function historyPage(db: Kysely<Database>, resourceId: number, before: number | undefined, limit: number) {
  let rows = db
    .selectFrom('check_history')
    .innerJoin('check_outcomes', 'check_outcomes.id', 'check_history.outcome_id')
    .leftJoin('check_details', 'check_details.history_id', 'check_history.id')
    .select(['check_history.id', 'resource_id', 'status', 'message', 'error_code', 'checked_at', 'duration_ms', 'location', 'ping'])
    // A page reads a preview of each ping's body, never the 100 KiB it may keep.
    .select(sql<string | null>`substr(ping_body, 1, ${PING_BODY_PREVIEW_BYTES})`.as('ping_body'))
    .where('resource_id', '=', resourceId);
  if (before !== undefined) rows = rows.where('check_history.id', '<', before);
  return rows.orderBy('check_history.id', 'desc').limit(limit).execute();
}

/**
 * `POST /api/resources/{id}/check`: checks now at every location of the
 * resource, records like a scheduled round, and returns the history entry of
 * the first location that checked (in location order). 503 when none could
 * check (agents disconnected or too old), with their reasons.
 */
export async function checkResource({ ctx, params }: RequestContext<Ops['checkResource']>) {
  const row = await ctx.db.selectFrom('resources').selectAll().where('id', '=', params.id).executeTakeFirst();
  if (!row) throw notFound(`Resource ${params.id} does not exist`);
  if (row.resource_type === 'PUSH') {
    const push = await ctx.db.selectFrom('push_checks').select('uuid').where('resource_id', '=', row.id).executeTakeFirst();
    const at = `${ctx.config.publicUrl ?? ''}/ping/${push?.uuid ?? '{uuid}'}`;
    throw conflict(`A push check is not checked; it waits for pings at ${at}`);
  }
  const locations = await locationsOfOne(ctx.db, row.id);
  const input = probeInputOf(row, requestBox(ctx));
  const checks = await runRound(ctx, ctx.prober, input, locations, Date.now());
  const entries = await recordResults(ctx, [{ resourceId: row.id, result: decide(row.quorum as Quorum, checks), checks }]);
  const exists = entries.length > 0 || (await ctx.db.selectFrom('resources').select('id').where('id', '=', params.id).executeTakeFirst());
  // Deleted while the probe ran: nothing was recorded.
  if (!exists) throw new HttpError(404, 'not-found', `Resource ${params.id} was deleted during the check`);
  if (entries.length === 0) {
    throw new HttpError(
      503,
      'location-unavailable',
      `No location could check resource ${params.id}: ${checks.map((c) => c.result.message).join('; ')}`,
    );
  }
  return entries[0];
}
