import { connect } from 'node:net';
import { type CheckConditions, judge } from './check-conditions.ts';
import { connectTiming, timeSocket } from './connection-timing.ts';
import { describeError } from './errors.ts';
import { probeTcpExpect } from './tcp-expect.ts';
import type { ProbeResult, TcpOptions } from './types.ts';

/** Splits `host:port` / `[v6]:port`. */
export function parseTcpTarget(target: string): { host: string; port: number } | undefined {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(target.trim());
  if (!m) return undefined;
  const port = Number(m[3]);
  if (port < 1 || port > 65535) return undefined;
  return { host: m[1] ?? m[2], port };
}

/**
 * Connects and closes at once: connected is AVAILABLE, when the conditions (of
 * `[CONNECTED]`, `[RESPONSE_TIME]` to connect, and `[IP]`) hold. With `tcp.send` or `tcp.expect`,
 * src/probes/tcp-expect.ts: it sends and reads the first bytes too.
 */
export function probeTcp(
  target: string,
  timeoutMs: number,
  conditions: CheckConditions | null = null,
  report = false,
  options?: TcpOptions,
): Promise<Omit<ProbeResult, 'durationMs' | 'checkedAt'>> {
  const address = parseTcpTarget(target);
  if (!address)
    return Promise.resolve({ status: 'NOT_AVAILABLE', message: `invalid TCP target "${target}"`, errorCode: 'CONNECTION_ERROR' });
  if (options && (options.send !== null || options.expect !== null)) {
    return probeTcpExpect(address, target, options, { timeoutMs, conditions, report, skipTLS: false });
  }
  return new Promise((resolve) => {
    const started = performance.now();
    const socket = connect({ host: address.host, port: address.port });
    timeSocket(socket, false);
    const timer = setTimeout(() => finish(new Error(`timeout after ${timeoutMs} ms`)), timeoutMs);
    let done = false;
    function finish(err?: unknown) {
      if (done) return;
      done = true;
      clearTimeout(timer);
      const ip = socket.remoteAddress ?? null;
      const timing = connectTiming(socket, started);
      socket.destroy();
      const outcomes = report ? [] : undefined;
      const responseTimeMs = performance.now() - started;
      const connected = err === undefined;
      const outcome = connected
        ? { status: 'AVAILABLE' as const, message: `connected to ${target}`, errorCode: null, timing }
        : { status: 'NOT_AVAILABLE' as const, message: describeError(err, timeoutMs), errorCode: 'CONNECTION_ERROR', timing };
      // A report shows the conditions' outcomes even when the connect failed ([CONNECTED] false).
      const judged =
        conditions && (connected || outcomes) ? judge(conditions, { connected, responseTimeMs, ip }, outcome, outcomes) : outcome;
      const verdict = connected ? judged : outcome;
      resolve(outcomes ? { ...verdict, report: { conditions: outcomes, response: null } } : verdict);
    }
    socket.once('connect', () => finish());
    socket.once('error', (err) => finish(err));
  });
}
