/** Retries stop this long after the notification was created. */
export const GIVE_UP_AFTER_MS = 24 * 3600_000;
/** No wait between attempts is longer than this. */
export const MAX_DELAY_MS = 30 * 60_000;

/**
 * The wait before retry number `attempt` (1 after the first failure):
 * exponential from `baseMs`, capped, with "equal jitter" (half fixed, half
 * random) so that receivers coming back are not hit by every daemon at once
 * yet no retry comes sooner than half its step.
 */
/**
 * The wait before the next attempt: the receiver's own `Retry-After` when it asked for longer than
 * the backoff (capped like it), else the backoff.
 */
export function nextDelay(attempt: number, baseMs: number, retryAfterMs: number | undefined, random = Math.random): number {
  const backoff = retryDelay(attempt, baseMs, random);
  return retryAfterMs !== undefined && retryAfterMs > backoff ? Math.min(MAX_DELAY_MS, Math.ceil(retryAfterMs)) : backoff;
}

export function retryDelay(attempt: number, baseMs: number, random = Math.random): number {
  const step = Math.min(MAX_DELAY_MS, baseMs * 2 ** Math.min(30, Math.max(0, attempt - 1)));
  return Math.round(step / 2 + random() * (step / 2));
}
