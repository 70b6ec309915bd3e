/**
 * TCP send/expect (docs/API.md#check-types): once connected, send `tcp.send`, then read until
 * `tcp.expect` can be judged. Text or hex: enough bytes to compare its length, stopping at the
 * first byte that differs; a regex: a match in what was read, at most MAX_EXPECT_READ bytes. The
 * peer closing or the timeout judge what came so far. Without `expect`, the first bytes are read
 * only when a condition reads `[BODY]` (the first chunk that comes).
 */
import { connect } from 'node:net';
import { connectTiming, timeSocket } from './connection-timing.ts';
import { describeError, EXPECT_FAILED } from './errors.ts';
import { conclude, type Outcome, type ProtocolProbeContext } from './protocol-probe.ts';
import type { TcpOptions } from './types.ts';

/** Most bytes read for `expect` and `[BODY]`: a banner or a first reply, not a stream. */
export const MAX_EXPECT_READ = 4096;
/** What a failure message shows of the bytes that came. */
const SHOWN = 64;

/** What came, escaped as a JSON string and cut short, for a message. */
function shown(bytes: Buffer): string {
  const text = JSON.stringify(bytes.subarray(0, SHOWN).toString('latin1'));
  return bytes.length > SHOWN ? `${text}…` : text;
}

/** Judges `expect` against the bytes read so far: true or false once decided, null while it needs more. */
function expectation(options: TcpOptions): (read: Buffer, final: boolean) => boolean | null {
  const expect = options.expect;
  // No expect, a condition on [BODY]: the first bytes that come are the body.
  if (expect === null) return (read, final) => (final || read.length > 0 ? true : null);
  if (options.expectKind === 'regex') {
    const re = new RegExp(expect);
    return (read, final) => (re.test(read.toString('utf8')) ? true : final ? false : null);
  }
  const wanted = Buffer.from(expect, options.expectKind === 'hex' ? 'hex' : 'utf8');
  return (read, final) => {
    const n = Math.min(read.length, wanted.length);
    if (!read.subarray(0, n).equals(wanted.subarray(0, n))) return false;
    if (n === wanted.length) return true;
    return final ? false : null;
  };
}

export function probeTcpExpect(
  address: { host: string; port: number },
  target: string,
  options: TcpOptions,
  ctx: ProtocolProbeContext,
): Promise<Outcome> {
  let judge: (read: Buffer, final: boolean) => boolean | null;
  try {
    judge = expectation(options);
  } catch (err) {
    return Promise.resolve({ status: 'NOT_AVAILABLE', message: `invalid expect: ${(err as Error).message}`, errorCode: EXPECT_FAILED });
  }
  // Without expect, nothing needs reading unless a condition reads [BODY].
  const reads = options.expect !== null || (ctx.conditions?.needsBody ?? false);
  const { timeoutMs } = ctx;
  return new Promise((resolve) => {
    const started = performance.now();
    const socket = connect({ host: address.host, port: address.port });
    timeSocket(socket, false);
    const timer = setTimeout(() => (connected ? finish(true) : fail(new Error(`timeout after ${timeoutMs} ms`))), timeoutMs);
    let connected = false;
    let sentAt = 0;
    let firstByteMs: number | null = null;
    let read = Buffer.alloc(0);
    let done = false;

    function fail(err: unknown) {
      if (done) return;
      done = true;
      clearTimeout(timer);
      const timing = connectTiming(socket, started);
      socket.destroy();
      const outcome: Outcome = { status: 'NOT_AVAILABLE', message: describeError(err, timeoutMs), errorCode: 'CONNECTION_ERROR', timing };
      resolve(conclude(ctx, outcome, { connected: false, responseTimeMs: performance.now() - started, ip: null, body: null }, false));
    }

    /** `final`: nothing more will come (closed, timed out, the read cap reached). */
    function finish(final: boolean) {
      if (done) return;
      const verdict = judge(read, final || read.length >= MAX_EXPECT_READ);
      if (verdict === null) return;
      done = true;
      clearTimeout(timer);
      const ip = socket.remoteAddress ?? null;
      const timing = { ...connectTiming(socket, started), firstByteMs: firstByteMs === null ? null : Math.round(firstByteMs * 10) / 10 };
      socket.destroy();
      const outcome: Outcome = verdict
        ? {
            status: 'AVAILABLE',
            message: `connected to ${target}${options.expect === null ? '' : ', expect matched'}`,
            errorCode: null,
            timing,
          }
        : {
            status: 'NOT_AVAILABLE',
            message: `expected ${options.expectKind} ${JSON.stringify(options.expect)}, got ${shown(read)}${read.length === 0 ? ' (nothing)' : ''}`,
            errorCode: EXPECT_FAILED,
            timing,
          };
      const observation = { connected: true, responseTimeMs: performance.now() - started, ip, body: read.toString('utf8') };
      resolve(conclude(ctx, outcome, observation, true));
    }

    socket.once('error', (err) => (connected ? finish(true) : fail(err)));
    socket.once('connect', () => {
      connected = true;
      sentAt = performance.now();
      if (options.send !== null) socket.write(Buffer.from(options.send, options.sendEncoding === 'hex' ? 'hex' : 'utf8'));
      if (!reads) socket.end(() => finish(true));
    });
    socket.on('data', (chunk: Buffer) => {
      firstByteMs ??= performance.now() - sentAt;
      // Never more than MAX_EXPECT_READ bytes kept, whatever the peer sends.
      read = Buffer.concat([read, chunk.subarray(0, MAX_EXPECT_READ - read.length)]);
      finish(false);
    });
    socket.once('end', () => finish(true));
    socket.once('close', () => (connected ? finish(true) : fail(new Error('closed before connecting'))));
  });
}
