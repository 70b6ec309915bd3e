import { invalidField, notFound } from '../../src/errors.ts';
import { formatDateTime, parseDateTime } from '../../src/time.ts';
import type { DaemonContext } from '../context.ts';
import type { Handler } from '../http/bind.ts';
import { TestClock } from '../util/clock.ts';
import type { Operations } from '../../src/api/operations.ts';

/**
 * `POST /admin/api/test-clock`: moves a test daemon's clock (`--test-clock on`) forward, so that
 * tests cross a deadline, a day or a DST change without sleeping. Without the test clock the
 * operation does not exist for the caller (404), as if the route were absent.
 */
export function moveTestClock(ctx: Pick<DaemonContext, 'clock' | 'log'>): Handler<Operations['moveTestClock']> {
  return ({ body }) => {
    const clock = ctx.clock;
    if (!(clock instanceof TestClock)) throw notFound('No test clock: the daemon runs without --test-clock on');
    if ((body.at === undefined) === (body.advanceSeconds === undefined)) {
      throw invalidField('at', 'give either at or advanceSeconds');
    }
    // One reading of the clock: the refusal and the move agree even across a millisecond tick.
    const before = clock.now();
    const at = body.at === undefined ? before + body.advanceSeconds! * 1000 : parseDateTime(body.at)!;
    if (at < before) throw invalidField('at', `the test clock only moves forward (it is ${formatDateTime(before)})`);
    const now = clock.advance(at - before);
    ctx.log.info({ now: new Date(now).toISOString() }, 'test clock moved');
    return { now: formatDateTime(now) };
  };
}
