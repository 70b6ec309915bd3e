/**
 * The daemon's clock for what waits on wall time by the calendar (push check deadlines). A test
 * daemon (`--test-clock on`) gets a clock that ADMIN moves forward through
 * `POST /admin/api/test-clock`, so that tests cross a day, a cron schedule or a DST change
 * without sleeping; timers armed on it re-arm through `onJump`.
 */
export interface Clock {
  now(): number;
  /** Called after the clock jumped; returns the unsubscribe. */
  onJump(listener: () => void): () => void;
}

export const systemClock: Clock = { now: () => Date.now(), onJump: () => () => {} };

/** The wall clock plus an offset that only grows: time never runs backwards for what waits on it. */
export class TestClock implements Clock {
  private offsetMs = 0;
  private readonly listeners = new Set<() => void>();

  now(): number {
    return Date.now() + this.offsetMs;
  }

  onJump(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Moves the clock forward by `ms` (0 or more) and returns the new now. An offset rather than an
   * instant: a caller that read now() and then asks for it would be refused if a millisecond
   * passed between the two readings.
   */
  advance(ms: number): number {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError('the test clock only moves forward');
    this.offsetMs += ms;
    for (const listener of this.listeners) listener();
    return this.now();
  }
}
