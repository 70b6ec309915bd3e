/**
 * Per-stream receive windows that grow for readers that keep up, as HTTP/2 and QUIC
 * implementations auto-tune theirs: a stream starts with a small window, so a reader that does not
 * read pulls little from the peer, and a window its reader drained within about a round trip is
 * doubled, up to the negotiated most, so bulk transfers are not held to the small one.
 */

/**
 * Most a stream's receive window may be: the peer may send this much before we return credit. Peers
 * that did not negotiate window growth use it as a fixed window (the protocol before window growth).
 */
export const STREAM_WINDOW = 1024 * 1024;
/**
 * Initial receive window of a stream whose window grows (negotiated on the dial, protocol.ts): a
 * reader that does not read pulls this much, not STREAM_WINDOW (with that window, 1,000 stalled readers
 * pulled 1 GB from the agent); a reader that keeps up grows it to STREAM_WINDOW (below).
 */
export const STREAM_WINDOW_INITIAL = 128 * 1024;

/** A stream window: what a stream starts with, and the most growth may make of it. */
export interface StreamWindows {
  initial: number;
  max: number;
}

/** The protocol before window growth: every stream 1 MiB, never more. */
export const FIXED_WINDOW: StreamWindows = { initial: STREAM_WINDOW, max: STREAM_WINDOW };

/**
 * "Quickly" is within this many round trips (ping RTT), and never less than MIN_QUICK_MS: on
 * loopback the RTT is a fraction of a millisecond, and a daemon relaying 1,000 answers serves each
 * stream once in tens of milliseconds. With a 10 ms floor those streams kept 128 KiB, and the
 * extra credit round trips slowed the other route's answers meanwhile (bench:tunnel's slow-reader
 * row, p50 110–145 → 110–430 ms); a reader that does not read completes no epoch whatever the floor.
 */
const QUICK_RTTS = 2;
const MIN_QUICK_MS = 100;

/** Monotonic milliseconds (process.hrtime: the global `performance` would load perf_hooks into the agent). */
export function nowMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

/** What window growth needs to know of a stream. */
export interface GrowingStream {
  recvWindow: number;
  epochConsumed: number;
  epochAt: number;
}

/**
 * The stream's receive window once `consumed` bytes have been read: doubled (at most `max`) when
 * the reader consumed two windows since the epoch began, each within QUICK_RTTS round trips. Each
 * check starts a new epoch. A reader that stops never completes an epoch, and the window never
 * exceeds what the reader has already taken, so a reader that took K bytes quickly and then
 * stalled (the HTTP/2 edge takes about 128 KiB of a stream the client does not read) holds at
 * most about K more: 128 KiB to 1 MiB is reached after 1.75 MiB read.
 */
export function grownWindow(stream: GrowingStream, consumed: number, max: number, srttMs: number): number {
  const window = stream.recvWindow;
  if (window >= max || consumed - stream.epochConsumed < 2 * window) return window;
  const now = nowMs();
  const quick = now - stream.epochAt < 2 * Math.max(MIN_QUICK_MS, QUICK_RTTS * srttMs);
  stream.epochConsumed = consumed;
  stream.epochAt = now;
  return quick ? Math.min(max, window * 2) : window;
}
