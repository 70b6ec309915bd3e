import { describe, expect, it } from 'vitest';
import { FREE_FAILURES, retryAfterSeconds } from '../../daemon/auth/two-factor/throttle.ts';

/** The lock after wrong codes (the HTTP side is in totp.test.ts): waiting a real 30 s there would only slow the suite. */
describe('two-factor throttle schedule', () => {
  const now = 1_800_000_000_000;

  it('four mistakes are free; from the fifth the lock starts at 30 s and doubles up to 15 minutes', () => {
    for (let f = 0; f < FREE_FAILURES; f++) expect(retryAfterSeconds(f, now, now)).toBe(0);
    const locks = [5, 6, 7, 8, 9, 10, 20].map((f) => retryAfterSeconds(f, now, now));
    expect(locks).toEqual([30, 60, 120, 240, 480, 900, 900]);
  });

  it('the lock counts from the last failure, and failures older than an hour are forgotten', () => {
    expect(retryAfterSeconds(6, now - 59_500, now)).toBe(1);
    expect(retryAfterSeconds(6, now - 60_000, now)).toBe(0);
    expect(retryAfterSeconds(30, now - 59 * 60_000, now)).toBe(0); // 15 minutes passed
    expect(retryAfterSeconds(30, now - 60 * 60_000, now)).toBe(0);
    expect(retryAfterSeconds(5, null, now)).toBe(0);
  });
});
