/** After a failed order, no new one for the name before this: ACME servers rate-limit failures (Let's Encrypt: 5 per hour). */
export const MIN_RETRY_MS = 60 * 60_000;
const MAX_RETRY_MS = 24 * 60 * 60_000;

/** The wait after the n-th failure in a row: an hour, doubling, at most a day. */
export function retryDelay(failures: number): number {
  return Math.min(MAX_RETRY_MS, MIN_RETRY_MS * 2 ** Math.max(0, failures - 1));
}
