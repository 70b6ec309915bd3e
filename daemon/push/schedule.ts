import { Cron } from 'croner';
import { LruMap } from '../../src/lru-map.ts';

/**
 * When a push check expects its next ping, and when it is late (docs/API.md#push-checks). One
 * function for every place that moves a deadline (creation, an edit, each ping), so that pods
 * and restarts agree:
 * - a finished run (success or failure) at `t` expects the next one at `t + period`, or at the
 *   first time of the cron expression after `t`, in its zone; late at that time plus grace;
 * - a start at `t` must finish within the grace: late at `t + grace` (as Healthchecks does);
 * - a new check counts from its creation, so a job that never runs is noticed.
 */
export interface PushSchedule {
  periodSeconds: number | null;
  cron: string | null;
  timezone: string | null;
  graceSeconds: number;
}

/** Compiled cron expressions by `zone\ncron`: pings of one check reuse its parse. Bounded. */
const compiled = new LruMap<string, Cron>(10_000);

function cronOf(expression: string, timezone: string | null): Cron {
  const key = `${timezone ?? ''}\n${expression}`;
  return compiled.getOrSet(key, () => new Cron(expression, { timezone: timezone ?? 'UTC', paused: true }));
}

/** When the run after one that finished at `finishedAt` is expected; undefined for a cron with no later time. */
export function expectedAfter(schedule: PushSchedule, finishedAt: number): number | undefined {
  if (schedule.cron !== null) return cronOf(schedule.cron, schedule.timezone).nextRun(new Date(finishedAt))?.getTime();
  return finishedAt + (schedule.periodSeconds ?? 0) * 1000;
}

/** When a check is late after a finished run (or its creation) at `at`; null when its cron never fires again. */
export function lateAfterFinish(schedule: PushSchedule, at: number): number | null {
  const expected = expectedAfter(schedule, at);
  return expected === undefined ? null : expected + schedule.graceSeconds * 1000;
}

/** When a run that started at `at` is late: it must finish within the grace. */
export function lateAfterStart(schedule: PushSchedule, at: number): number {
  return at + schedule.graceSeconds * 1000;
}

/**
 * The reason a schedule is invalid (400 naming `field`), or undefined: exactly one of a period
 * and a cron expression; a cron expression croner parses, in a zone Intl knows, that fires again.
 */
export function scheduleProblem(schedule: PushSchedule, now: number): { field: string; message: string } | undefined {
  if (schedule.cron !== null && schedule.periodSeconds !== null) {
    return { field: 'cron', message: 'give either cron or periodSeconds, not both' };
  }
  if (schedule.timezone !== null) {
    if (schedule.cron === null) return { field: 'timezone', message: 'a time zone goes with cron' };
    try {
      new Intl.DateTimeFormat('en', { timeZone: schedule.timezone });
    } catch {
      return { field: 'timezone', message: `${schedule.timezone} is not an IANA time zone (e.g. Europe/Berlin)` };
    }
  }
  if (schedule.cron !== null) {
    let next: Date | null | undefined;
    try {
      next = new Cron(schedule.cron, { timezone: schedule.timezone ?? 'UTC', paused: true }).nextRun(new Date(now));
    } catch (err) {
      return { field: 'cron', message: (err as Error).message.replace(/^CronPattern: /, '') };
    }
    if (!next) return { field: 'cron', message: 'this expression never fires' };
  }
  return undefined;
}
