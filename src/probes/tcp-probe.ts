import { connect } from 'node:net';
import { type CheckConditions, judge } from './check-conditions.ts';
import { describeError } from './errors.ts';
import type { ProbeResult } from './types.ts';

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
 * `[CONNECTED]`, `[RESPONSE_TIME]` to connect, and `[IP]`) hold.
 */
export function probeTcp(
  target: string,
  timeoutMs: number,
  conditions: CheckConditions | null = null,
): Promise<Omit<ProbeResult, 'durationMs' | 'checkedAt'>> {
  const address = parseTcpTarget(target);
  if (!address)
    return Promise.resolve({ status: 'NOT_AVAILABLE', message: `invalid TCP target "${target}"`, errorCode: 'CONNECTION_ERROR' });
  return new Promise((resolve) => {
    const started = performance.now();
    const socket = connect({ host: address.host, port: address.port });
    const timer = setTimeout(() => finish(new Error(`timeout after ${timeoutMs} ms`)), timeoutMs);
    let done = false;
    function finish(err?: unknown) {
      if (done) return;
      done = true;
      clearTimeout(timer);
      const ip = socket.remoteAddress ?? null;
      socket.destroy();
      if (err === undefined) {
        const passed = { status: 'AVAILABLE' as const, message: `connected to ${target}`, errorCode: null };
        const responseTimeMs = performance.now() - started;
        resolve(conditions ? judge(conditions, { connected: true, responseTimeMs, ip }, passed) : passed);
      } else resolve({ status: 'NOT_AVAILABLE', message: describeError(err, timeoutMs), errorCode: 'CONNECTION_ERROR' });
    }
    socket.once('connect', () => finish());
    socket.once('error', (err) => finish(err));
  });
}
