import { describe, expect, it } from 'vitest';
import { MAX_DELAY_MS, nextDelay } from '../../daemon/alerts/delivery/backoff.ts';
import { retryAfterOf } from '../../daemon/alerts/notifiers/http-post.ts';

/**
 * A provider's `Retry-After` against the retry backoff (docs/API.md#notifiers): the next attempt
 * waits at least as long as the provider asks, never longer than the backoff's cap.
 */
describe('Retry-After', () => {
  const now = Date.UTC(2026, 10, 28, 9, 0, 0);

  it('reads seconds and HTTP dates, and nothing else', () => {
    expect(retryAfterOf('120', now)).toBe(120_000);
    expect(retryAfterOf(' 0 ', now)).toBe(0);
    expect(retryAfterOf('Sat, 28 Nov 2026 09:00:30 GMT', now)).toBe(30_000);
    expect(retryAfterOf('Sat, 28 Nov 2026 08:59:00 GMT', now)).toBe(0);
    expect(retryAfterOf(['7', '9'], now)).toBe(7_000);
    expect(retryAfterOf(undefined, now)).toBeUndefined();
    expect(retryAfterOf('soon', now)).toBeUndefined();
    expect(retryAfterOf('-5', now)).toBeUndefined();
  });

  it('waits the longer of the backoff and the ask, capped', () => {
    const half = () => 0.5;
    const backoff = nextDelay(1, 1000, undefined, half);
    expect(backoff).toBe(750);
    expect(nextDelay(1, 1000, 100, half)).toBe(backoff);
    expect(nextDelay(1, 1000, 60_000, half)).toBe(60_000);
    expect(nextDelay(1, 1000, 24 * 3600_000, half)).toBe(MAX_DELAY_MS);
  });
});
