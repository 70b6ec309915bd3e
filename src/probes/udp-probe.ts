import { NO_RESPONSE } from './errors.ts';
import { conclude, type Outcome, type ProtocolProbe } from './protocol-probe.ts';
import { parseTcpTarget } from './tcp-probe.ts';
import type { UdpOptions } from './types.ts';
import { NoAnswer, show, udpExchange } from './udp-exchange.ts';

/** Most bytes of the answer kept as `[BODY]`: a datagram may hold 64 KiB; a condition reads its start. */
export const MAX_UDP_BODY_BYTES = 4096;

/**
 * UDP checks (docs/API.md#check-types): sends `send` (text or hex) in one datagram to `host:port`
 * and waits for one datagram back from there. An answer is AVAILABLE; silence until the timeout
 * is NO_RESPONSE (UDP is connectionless: nothing tells a lost datagram from a host that ignores
 * it); an ICMP port unreachable (ECONNREFUSED on the connected socket) is CONNECTION_ERROR.
 */
export const probeUdp: ProtocolProbe<UdpOptions> = async (target, given, ctx) => {
  // The runner passes null when a row or an agent's message carries none: the documented defaults.
  const options: UdpOptions = given ?? { send: '', sendEncoding: 'text' };
  const server = parseTcpTarget(target);
  if (!server) return { status: 'NOT_AVAILABLE', message: `invalid UDP target "${target}"`, errorCode: 'CONNECTION_ERROR' };
  const payload = Buffer.from(options.send, options.sendEncoding === 'hex' ? 'hex' : 'utf8');
  const started = performance.now();
  try {
    const { answer, address } = await udpExchange(payload, server, ctx.timeoutMs);
    const responseTimeMs = performance.now() - started;
    const body = answer.subarray(0, MAX_UDP_BODY_BYTES).toString('utf8');
    const outcome: Outcome = { status: 'AVAILABLE', message: `${answer.length} bytes from ${show(server)}`, errorCode: null };
    return conclude(
      ctx,
      outcome,
      { connected: true, responseTimeMs, ip: address, body, bodyTruncated: answer.length > MAX_UDP_BODY_BYTES },
      true,
    );
  } catch (err) {
    const responseTimeMs = performance.now() - started;
    const silent = err instanceof NoAnswer && err.silent;
    const message = err instanceof Error ? err.message : String(err);
    const outcome: Outcome = silent
      ? {
          status: 'NOT_AVAILABLE',
          message: `${message} (UDP is connectionless: silence is the only failure it can see)`,
          errorCode: NO_RESPONSE,
        }
      : { status: 'NOT_AVAILABLE', message, errorCode: 'CONNECTION_ERROR' };
    return conclude(ctx, outcome, { connected: false, responseTimeMs, ip: null, body: null }, false);
  }
};
