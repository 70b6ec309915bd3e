import type { Kysely, Transaction } from 'kysely';
import type { PingKind, PushView } from '../../../src/api/schemas/push.ts';
import { formatNullable } from '../../../src/time.ts';
import type { Database } from '../../store/schema.ts';
import { keyFor, keysByScope } from './ping-keys.ts';

type Db = Kysely<Database> | Transaction<Database>;

/** Rows per `IN (…)` list, under every dialect's bind-parameter limit. */
const CHUNK = 500;

/**
 * The admin views' `push` of the PUSH resources among `resources`, by id: two queries for a whole
 * list page (its push checks, every ping key), not one per row. `groupIds` are each resource's
 * groups; `publicUrl` makes the ping URLs absolute when the daemon knows where it is reached.
 */
export async function pushViewsOf(
  db: Db,
  publicUrl: string | undefined,
  resources: ReadonlyArray<{ id: number; resource_type: string }>,
  groupIds: (resourceId: number) => readonly number[],
): Promise<Map<number, PushView>> {
  const out = new Map<number, PushView>();
  const ids = resources.filter((r) => r.resource_type === 'PUSH').map((r) => r.id);
  if (ids.length === 0) return out;
  const keys = await keysByScope(db);
  const base = `${publicUrl ?? ''}/ping`;
  let query = db.selectFrom('push_checks').selectAll();
  // The admin list holds every resource: past one IN list, reading every push check is one query.
  if (ids.length <= CHUNK) query = query.where('resource_id', 'in', ids);
  for (const row of await query.execute()) {
    const key = keyFor(keys, groupIds(row.resource_id));
    out.set(row.resource_id, {
      uuid: row.uuid,
      pingUrl: `${base}/${row.uuid}`,
      slug: row.slug,
      slugUrl: key === undefined ? null : `${base}/${key}/${row.slug}`,
      periodSeconds: row.period_seconds,
      cron: row.cron,
      timezone: row.timezone,
      graceSeconds: row.grace_seconds,
      lastPingAt: formatNullable(row.last_ping_at),
      lastPingKind: row.last_ping_kind as PingKind | null,
      startedAt: formatNullable(row.started_at),
      lateAt: formatNullable(row.late_at),
    });
  }
  return out;
}
