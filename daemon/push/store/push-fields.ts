import { httpCheckFields } from '../../../src/api/schemas/http-check.ts';
import { DEFAULT_GRACE_SECONDS, DEFAULT_PERIOD_SECONDS, pushCheckFields } from '../../../src/api/schemas/push.ts';
import { invalidField } from '../../../src/errors.ts';
import { type PushSchedule, scheduleProblem } from '../schedule.ts';

/** The schedule fields, which only PUSH resources take. */
export const PUSH_FIELDS = Object.keys(pushCheckFields(false));

/** What a probe reads, which a PUSH resource (never probed) does not take: where, how often, and the request. */
export const NOT_ON_PUSH = ['intervalSeconds', 'locations', 'quorum', 'skipTLS', 'recursive', ...Object.keys(httpCheckFields(false))];

/** The schedule fields as create and PATCH take them (PATCH: null removes cron or period). */
export interface ScheduleFields {
  periodSeconds?: number | null;
  cron?: string | null;
  timezone?: string | null;
  graceSeconds?: number;
}

/**
 * 400 naming the first field the type does not take: a probe's fields on PUSH, the schedule's on
 * the other types. Present is enough (null included): a field that cannot apply is a mistake to
 * say, not to ignore.
 */
export function checkTypeFields(push: boolean, body: object): void {
  const fields = body as Record<string, unknown>;
  const set = (push ? NOT_ON_PUSH : PUSH_FIELDS).filter((k) => fields[k] !== undefined);
  if (set.length === 0) return;
  throw invalidField(
    set[0],
    push
      ? `a PUSH resource is not checked, it waits for pings: it takes no ${set.join(', ')}`
      : `only PUSH resources take ${set.join(', ')}`,
  );
}

/** A create body's schedule, checked (400 naming the field): neither a period nor cron gives a period of one day. */
export function createSchedule(body: ScheduleFields, now: number): PushSchedule {
  const cron = body.cron ?? null;
  return checked(
    {
      periodSeconds: body.periodSeconds ?? (cron === null ? DEFAULT_PERIOD_SECONDS : null),
      cron,
      timezone: body.timezone ?? null,
      graceSeconds: body.graceSeconds ?? DEFAULT_GRACE_SECONDS,
    },
    now,
  );
}

/**
 * A stored schedule with a PATCH applied, checked: a new cron replaces the period and a new
 * period the cron (and its zone) unless both are given, which stays refused; null removes one;
 * with neither left, the period of one day.
 */
export function patchSchedule(stored: PushSchedule, body: ScheduleFields, now: number): PushSchedule {
  let periodSeconds = body.periodSeconds !== undefined ? body.periodSeconds : stored.periodSeconds;
  let cron = body.cron !== undefined ? body.cron : stored.cron;
  let timezone = body.timezone !== undefined ? body.timezone : stored.timezone;
  if (typeof body.cron === 'string' && body.periodSeconds === undefined) periodSeconds = null;
  if (typeof body.periodSeconds === 'number' && body.cron === undefined) cron = null;
  // A zone belongs to its cron expression: removing the expression removes it, unless the PATCH names one (refused then).
  if (cron === null && body.timezone === undefined) timezone = null;
  if (cron === null && periodSeconds === null) periodSeconds = DEFAULT_PERIOD_SECONDS;
  return checked({ periodSeconds, cron, timezone, graceSeconds: body.graceSeconds ?? stored.graceSeconds }, now);
}

/** 400 naming the field of scheduleProblem; a cron expression without a zone is in UTC, and says so. */
function checked(schedule: PushSchedule, now: number): PushSchedule {
  const problem = scheduleProblem(schedule, now);
  if (problem) throw invalidField(problem.field, problem.message);
  return schedule.cron !== null && schedule.timezone === null ? { ...schedule, timezone: 'UTC' } : schedule;
}

export function sameSchedule(a: PushSchedule, b: PushSchedule): boolean {
  return a.periodSeconds === b.periodSeconds && a.cron === b.cron && a.timezone === b.timezone && a.graceSeconds === b.graceSeconds;
}
