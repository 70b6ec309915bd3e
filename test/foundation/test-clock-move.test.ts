import { afterEach, describe, expect, it, vi } from 'vitest';
import pino from 'pino';
import { moveTestClock } from '../../daemon/system/test-clock.ts';
import { TestClock } from '../../daemon/util/clock.ts';

/**
 * The test clock's move on a wall clock that ticks between readings: a move by 0 seconds, or to
 * the instant the clock last reported, is never refused for the millisecond that passed meanwhile
 * (CI saw `advanceSeconds: 0` answered 500 "the test clock only moves forward").
 */
describe('test clock move', () => {
  afterEach(() => vi.restoreAllMocks());

  function tickingClock(): TestClock {
    let wall = Date.UTC(2026, 10, 28, 8, 0, 0);
    vi.spyOn(Date, 'now').mockImplementation(() => ++wall);
    return new TestClock();
  }

  const call = (clock: TestClock, body: { at?: string; advanceSeconds?: number }) =>
    moveTestClock({ clock, log: pino({ level: 'silent' }) })({ body } as never);

  it('moves by 0 seconds, and by an hour, while the wall clock ticks on every reading', async () => {
    const clock = tickingClock();
    const start = clock.now();
    await call(clock, { advanceSeconds: 0 });
    await call(clock, { advanceSeconds: 3600 });
    expect(clock.now() - start).toBeGreaterThanOrEqual(3600_000);
  });

  it('refuses an instant in its past with a field error, and never moves backwards', async () => {
    const clock = tickingClock();
    const before = clock.now();
    expect(() => call(clock, { at: new Date(before - 60_000).toISOString() })).toThrow(/only moves forward/);
    expect(clock.now()).toBeGreaterThan(before);
    expect(() => clock.advance(-1)).toThrow(RangeError);
  });
});
