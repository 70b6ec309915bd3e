import { type Kysely, type RawBuilder, sql } from 'kysely';
import { shapedChunks } from '../store/batches.ts';
import type { Database } from '../store/schema.ts';
import type { PushSchedule } from './schedule.ts';

/** A push check as a ping needs it: its schedule, its pending start, and what judges a success. */
export interface PingTarget {
  resourceId: number;
  uuid: string;
  slug: string;
  schedule: PushSchedule;
  startedAt: number | null;
  active: boolean;
  conditions: string | null;
  /** The resource's latest verdict: what a history-only entry (start, log) shows. */
  latestCheckStatus: string | null;
}

/** A ping key as `/ping/{key}/{slug}` needs it. */
export interface PingKeyRow {
  key: string;
  groupId: number | null;
  allowCreate: boolean;
}

type Db = Kysely<Database>;
const MAX_ROWS = 256;

function query(db: Db) {
  return db
    .selectFrom('push_checks as p')
    .innerJoin('resources as r', 'r.id', 'p.resource_id')
    .select([
      'p.resource_id',
      'p.uuid',
      'p.slug',
      'p.period_seconds',
      'p.cron',
      'p.timezone',
      'p.grace_seconds',
      'p.started_at',
      'r.active',
      'r.conditions',
      'r.latest_check_status',
    ]);
}
type Row = Awaited<ReturnType<ReturnType<typeof query>['execute']>>[number];

function targetOf(row: Row): PingTarget {
  return {
    resourceId: row.resource_id,
    uuid: row.uuid,
    slug: row.slug,
    schedule: { periodSeconds: row.period_seconds, cron: row.cron, timezone: row.timezone, graceSeconds: row.grace_seconds },
    startedAt: row.started_at === null ? null : Number(row.started_at),
    active: Boolean(row.active),
    conditions: row.conditions,
    latestCheckStatus: row.latest_check_status,
  };
}

/** The push checks with these uuids, and those with these slugs (a batch's pings, a few statements). */
export async function findTargets(
  db: Db,
  uuids: string[],
  slugs: string[],
): Promise<{ byUuid: Map<string, PingTarget>; bySlug: Map<string, PingTarget> }> {
  const byUuid = new Map<string, PingTarget>();
  const bySlug = new Map<string, PingTarget>();
  for (const part of shapedChunks(uuids, MAX_ROWS)) {
    for (const row of await query(db).where('p.uuid', 'in', part).execute()) byUuid.set(row.uuid, targetOf(row));
  }
  for (const part of shapedChunks(slugs, MAX_ROWS)) {
    for (const row of await query(db).where('p.slug', 'in', part).execute()) bySlug.set(row.slug, targetOf(row));
  }
  return { byUuid, bySlug };
}

/** The ping keys among `keys`. */
export async function findKeys(db: Db, keys: string[]): Promise<Map<string, PingKeyRow>> {
  const out = new Map<string, PingKeyRow>();
  for (const part of shapedChunks(keys, MAX_ROWS)) {
    const rows = await db.selectFrom('ping_keys').select(['key', 'group_id', 'allow_create']).where('key', 'in', part).execute();
    for (const row of rows) out.set(row.key, { key: row.key, groupId: row.group_id, allowCreate: Boolean(row.allow_create) });
  }
  return out;
}

/** `resourceId:groupId` for each of these resources' groups: a group's key reaches its own push checks only. */
export async function membership(db: Db, resourceIds: number[]): Promise<Set<string>> {
  const out = new Set<string>();
  for (const part of shapedChunks([...new Set(resourceIds)], MAX_ROWS)) {
    const rows = await db.selectFrom('resource_groups').select(['resource_id', 'group_id']).where('resource_id', 'in', part).execute();
    for (const row of rows) out.add(`${row.resource_id}:${row.group_id}`);
  }
  return out;
}

/** A push check's deadline state after a batch's pings (only the columns that moved). */
export interface PushUpdate {
  resourceId: number;
  lastPingAt?: number;
  lastPingKind?: string;
  startedAt?: number | null;
  lateAt: number | null;
}

/** Rows per statement: 4 columns x 2 parameters x 64 rows stays far below every dialect's limit. */
const UPDATE_ROWS = 64;

/**
 * Writes the batch's deadline moves (inside the transaction that records their history), one
 * statement per 64 checks (`SET col = CASE resource_id WHEN … THEN … END`, as the result writer's
 * latest columns): one UPDATE per ping was the ping writer's largest cost. A column a ping does
 * not move keeps its value (`THEN col`).
 */
export async function writeUpdates(db: Db, updates: Iterable<PushUpdate>): Promise<void> {
  for (const part of shapedChunks([...updates], UPDATE_ROWS)) {
    const cases = <T>(pick: (u: PushUpdate) => RawBuilder<unknown>): RawBuilder<T> =>
      sql<T>`CASE ${sql.ref('resource_id')} ${sql.join(
        part.map((u) => sql`WHEN ${u.resourceId} THEN ${pick(u)}`),
        sql` `,
      )} END`;
    // CAST: PostgreSQL types each branch; NULL casts to NULL.
    const int = (value: number | null) => sql`CAST(${value} AS bigint)`;
    await db
      .updateTable('push_checks')
      .set({
        late_at: cases<number>((u) => int(u.lateAt)),
        last_ping_at: cases<number>((u) => (u.lastPingAt === undefined ? sql.ref('last_ping_at') : int(u.lastPingAt))),
        last_ping_kind: cases<string>((u) => (u.lastPingAt === undefined ? sql.ref('last_ping_kind') : sql`${u.lastPingKind ?? null}`)),
        started_at: cases<number>((u) => (u.startedAt === undefined ? sql.ref('started_at') : int(u.startedAt))),
      })
      .where(
        'resource_id',
        'in',
        part.map((u) => u.resourceId),
      )
      .execute();
  }
}
