/**
 * SSH checks (docs/API.md#check-types): connect, read the server's identification string and
 * close, with no key exchange and no login (RFC 4253 §4.2).
 */
import { connect } from 'node:net';
import { connectTiming, timeSocket } from './connection-timing.ts';
import { describeError, SSH_ERROR } from './errors.ts';
import { conclude, type Outcome, type ProtocolProbe } from './protocol-probe.ts';
import { parseTcpTarget } from './tcp-probe.ts';

/** RFC 4253: a line is at most 255 bytes with its CR LF. */
const MAX_LINE_BYTES = 255;
/** Lines a server may send before its identification (a banner); past these it is not speaking SSH to us. */
export const MAX_PRE_LINES = 10;

/** `host:port`, `host` (port 22), `[v6]:port` or `[v6]`. */
export function parseSshTarget(target: string): { host: string; port: number } | undefined {
  const t = target.trim();
  if (/^\[[^\]]+\]$/.test(t)) return { host: t.slice(1, -1), port: 22 };
  if (/^[^:[\]\s]+$/.test(t)) return { host: t, port: 22 };
  return parseTcpTarget(t);
}

/** What the server sent: its identification line, or why there is none. */
type Banner = { line: string } | { problem: string };

/**
 * Reads lines until one starts with `SSH-`: bounded to MAX_PRE_LINES lines of MAX_LINE_BYTES
 * each, so that a server sending anything else costs at most a few KiB.
 */
function bannerReader(): (chunk: Buffer) => Banner | undefined {
  let pending = Buffer.alloc(0);
  let lines = 0;
  return (chunk) => {
    pending = Buffer.concat([pending, chunk]);
    for (;;) {
      const end = pending.indexOf(0x0a);
      if (end < 0) {
        if (pending.length > MAX_LINE_BYTES) return { problem: `a line longer than ${MAX_LINE_BYTES} bytes` };
        return undefined;
      }
      if (end + 1 > MAX_LINE_BYTES) return { problem: `a line longer than ${MAX_LINE_BYTES} bytes` };
      const line = pending.subarray(0, end).toString('latin1').replace(/\r$/, '');
      pending = pending.subarray(end + 1);
      if (line.startsWith('SSH-')) return { line };
      if (++lines >= MAX_PRE_LINES) return { problem: `${lines} lines without an identification string` };
    }
  };
}

export const probeSsh: ProtocolProbe<null> = (target, _options, ctx) => {
  const address = parseSshTarget(target);
  if (!address)
    return Promise.resolve({ status: 'NOT_AVAILABLE', message: `invalid SSH target "${target}"`, errorCode: 'CONNECTION_ERROR' });
  return new Promise((resolve) => {
    const started = performance.now();
    const socket = connect({ host: address.host, port: address.port });
    timeSocket(socket, false);
    const read = bannerReader();
    let connected = false;
    let done = false;
    const timer = setTimeout(
      () =>
        finish(
          connected ? { problem: `no identification string within ${ctx.timeoutMs} ms` } : new Error(`timeout after ${ctx.timeoutMs} ms`),
        ),
      ctx.timeoutMs,
    );
    function finish(result: Banner | Error) {
      if (done) return;
      done = true;
      clearTimeout(timer);
      const responseTimeMs = performance.now() - started;
      const ip = socket.remoteAddress ?? null;
      const timing = connectTiming(socket, started);
      // No login: the banner is all a check needs, and closing now keeps the server's pre-auth slot free.
      socket.destroy();
      let outcome: Outcome;
      if (result instanceof Error)
        outcome = { status: 'NOT_AVAILABLE', message: describeError(result, ctx.timeoutMs), errorCode: 'CONNECTION_ERROR' };
      else if ('problem' in result)
        outcome = { status: 'NOT_AVAILABLE', message: `no SSH identification string: ${result.problem}`, errorCode: SSH_ERROR };
      else if (/^SSH-(2\.0|1\.99)-/.test(result.line)) outcome = { status: 'AVAILABLE', message: result.line, errorCode: null };
      else outcome = { status: 'NOT_AVAILABLE', message: `not SSH 2: ${result.line}`, errorCode: SSH_ERROR };
      const body = !(result instanceof Error) && 'line' in result ? result.line : null;
      resolve(conclude(ctx, { ...outcome, timing }, { connected, responseTimeMs, body, ip }, connected));
    }
    socket.once('connect', () => (connected = true));
    socket.on('data', (chunk: Buffer) => {
      const banner = read(chunk);
      if (banner) finish(banner);
    });
    socket.once('end', () => finish({ problem: 'the server closed the connection before sending one' }));
    socket.once('error', (err) => finish(connected ? { problem: describeError(err) } : err));
  });
};
