import { randomUUID } from 'node:crypto';
import type { Kysely, Selectable, Transaction, Updateable } from 'kysely';
import { conflict } from '../../../src/errors.ts';
import type { Database, PushChecksTable } from '../../store/schema.ts';
import { uniqueViolation } from '../../store/unique-violation.ts';
import { lateAfterFinish, lateAfterStart, type PushSchedule } from '../schedule.ts';
import { patchSchedule, type ScheduleFields, sameSchedule } from './push-fields.ts';
import { checkSlug, checkSlugFree } from './slugs.ts';

type Db = Kysely<Database> | Transaction<Database>;
type PushRow = Selectable<PushChecksTable>;

/** A row's schedule, as schedule.ts reads it. */
export function scheduleOf(row: Pick<PushRow, 'period_seconds' | 'cron' | 'timezone' | 'grace_seconds'>): PushSchedule {
  return { periodSeconds: row.period_seconds, cron: row.cron, timezone: row.timezone, graceSeconds: row.grace_seconds };
}

/**
 * The push_checks row of a new PUSH resource, in its create transaction: a random uuid (the
 * secret of its ping URL), and a deadline counted from `now` (`ctx.clock`), so that a job that
 * never runs is noticed. A slug another create took meanwhile is a 409 naming `target`.
 */
export async function insertPushCheck(db: Db, resourceId: number, slug: string, schedule: PushSchedule, now: number): Promise<void> {
  await db
    .insertInto('push_checks')
    .values({
      resource_id: resourceId,
      uuid: randomUUID(),
      slug,
      period_seconds: schedule.periodSeconds,
      cron: schedule.cron,
      timezone: schedule.timezone,
      grace_seconds: schedule.graceSeconds,
      last_ping_at: null,
      last_ping_kind: null,
      started_at: null,
      late_at: lateAfterFinish(schedule, now),
      created_at: now,
    })
    .execute()
    .catch((err: unknown) => {
      throw uniqueViolation(err, 'target') ?? err;
    });
}

/**
 * A PATCH of a PUSH resource's slug (`target`) and schedule, in its update transaction. A new
 * schedule moves the deadline as schedule.ts says, from the pending start, else the last
 * finished ping, else the creation; a check judged late (`late_at` NULL) stays so until a ping.
 * The update is conditional on the deadline state it read: a ping committed meanwhile (another
 * pod, PostgreSQL's read committed) is read again rather than overwritten. Returns whether
 * anything changed.
 */
export async function patchPushCheck(
  db: Db,
  resourceId: number,
  body: ScheduleFields & { target?: string },
  now: number,
  resourceCreatedAt: number,
): Promise<boolean> {
  if (body.target !== undefined) checkSlug(body.target);
  for (let attempt = 0; attempt < 5; attempt++) {
    const row = await db.selectFrom('push_checks').selectAll().where('resource_id', '=', resourceId).executeTakeFirst();
    if (!row) throw conflict(`Resource ${resourceId} has no push check record; delete it and create it again`);
    const stored = scheduleOf(row);
    const schedule = patchSchedule(stored, body, now);
    const set: Updateable<PushChecksTable> = {};
    if (body.target !== undefined && body.target !== row.slug) {
      await checkSlugFree(db, body.target, resourceId);
      set.slug = body.target;
    }
    if (!sameSchedule(stored, schedule)) {
      set.period_seconds = schedule.periodSeconds;
      set.cron = schedule.cron;
      set.timezone = schedule.timezone;
      set.grace_seconds = schedule.graceSeconds;
      if (row.late_at !== null) set.late_at = deadline(schedule, row, resourceCreatedAt);
    }
    if (Object.keys(set).length === 0) return false;
    const updated = await db
      .updateTable('push_checks')
      .set(set)
      .where('resource_id', '=', resourceId)
      .where((eb) =>
        eb.and([
          row.late_at === null ? eb('late_at', 'is', null) : eb('late_at', '=', row.late_at),
          row.started_at === null ? eb('started_at', 'is', null) : eb('started_at', '=', row.started_at),
          row.last_ping_at === null ? eb('last_ping_at', 'is', null) : eb('last_ping_at', '=', row.last_ping_at),
        ]),
      )
      .executeTakeFirst()
      .catch((err: unknown) => {
        throw uniqueViolation(err, 'target') ?? err;
      });
    if (Number(updated.numUpdatedRows) > 0) return true;
  }
  throw conflict(`Push check ${resourceId} is receiving pings faster than it can be edited; try again`);
}

/** When a check with this schedule and state is late: a pending start, else the last finished run, else its creation. */
function deadline(schedule: PushSchedule, row: PushRow, resourceCreatedAt: number): number | null {
  if (row.started_at !== null) return lateAfterStart(schedule, row.started_at);
  return lateAfterFinish(schedule, row.last_ping_at ?? row.created_at ?? resourceCreatedAt);
}
