import { operations } from '../../src/api/operations.ts';
import type { TestDaemon } from './daemon.ts';
import { bearer, send, type WireResponse } from './http.ts';

/** The flag a daemon needs for `moveClock` (its clock of push deadlines becomes movable). */
export const TEST_CLOCK_ARGS = ['--test-clock', 'on'];

/**
 * Moves a test daemon's clock forward (`POST /admin/api/test-clock`): to an instant (RFC 3339,
 * or epoch ms) or by a number of seconds. Deadlines it passes are judged at once. Returns the new
 * time, as the API writes date-times.
 */
export async function moveClock(d: TestDaemon, move: { at: string | number } | { advanceSeconds: number }): Promise<string> {
  const body = 'at' in move ? { at: typeof move.at === 'number' ? new Date(move.at).toISOString() : move.at } : move;
  const { now } = await d.admin.call(operations.moveTestClock, { body });
  return now;
}

/** `POST /admin/api/test-clock` as sent, answer unchecked (the refusals' tests); `token` null: no credentials. */
export function clockRequest(d: TestDaemon, body: unknown, token: string | null = d.adminKey): Promise<WireResponse> {
  const headers = { 'content-type': 'application/json', ...(token === null ? {} : bearer(token)) };
  return send(d.url, 'POST', '/admin/api/test-clock', { headers, body: JSON.stringify(body) });
}
