/**
 * How long a user's code attempts wait after failures (docs/API.md#two-factor-login): four
 * mistakes are free, the fifth locks for 30 s, each further one doubles it up to 15 minutes.
 * Failures older than an hour are forgotten. Kept in `users.totp_failures` and
 * `totp_failed_at`, so every pod sees the same count.
 */
export const FREE_FAILURES = 5;
const FIRST_LOCK_MS = 30_000;
const MAX_LOCK_MS = 15 * 60_000;
const FORGET_AFTER_MS = 60 * 60_000;

/** The failures that still count at `now`. */
export function countingFailures(failures: number, failedAt: number | null, now: number): number {
  return failedAt === null || now - failedAt >= FORGET_AFTER_MS ? 0 : failures;
}

/** Seconds to wait before the next attempt, or 0. */
export function retryAfterSeconds(failures: number, failedAt: number | null, now: number): number {
  const counting = countingFailures(failures, failedAt, now);
  if (counting < FREE_FAILURES || failedAt === null) return 0;
  const lock = Math.min(MAX_LOCK_MS, FIRST_LOCK_MS * 2 ** Math.min(counting - FREE_FAILURES, 10));
  const left = failedAt + lock - now;
  return left > 0 ? Math.ceil(left / 1000) : 0;
}
