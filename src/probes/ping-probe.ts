import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { AF_INET, AF_INET6 } from './ping/libc.ts';
import { libc } from './ping/libc.ts';
import type { IcmpFamily } from './ping/icmp-socket.ts';
import { sendEchoes } from './ping/pinger.ts';
import { conclude, type Outcome, type ProtocolProbe, type ProtocolProbeContext } from './protocol-probe.ts';
import type { PingOptions } from './types.ts';

const FAMILY = { auto: 0, ipv4: 4, ipv6: 6 } as const;
/** docs/API.md#check-types' defaults, for a caller that sends no options (the daemon fills them in). */
const DEFAULTS: PingOptions = { count: 3, intervalMs: 200, family: 'auto' };

/**
 * PING checks (docs/API.md#check-types): `count` ICMP echoes `intervalMs` apart to the target's
 * address (the first of its family), through the process's shared ICMP sockets, never a `ping`
 * process. AVAILABLE when one came back; `[PACKET_LOSS]` may decide instead.
 */
export const probePing: ProtocolProbe<PingOptions> = async (target, given, ctx) => {
  const options = given ?? DEFAULTS;
  const deadline = Date.now() + ctx.timeoutMs;
  const host = target.trim().replace(/^\[(.*)\]$/, '$1');
  const resolved = await resolve(host, FAMILY[options.family], ctx.timeoutMs);
  if (typeof resolved === 'string') return unreached(ctx, resolved, null);
  const { ip, family } = resolved;
  const address = toBytes(ip, family);
  if (!address) return unreached(ctx, `${ip} is not an address ICMP can reach`, ip);
  const echoes = sendEchoes(family, address, options.count, options.intervalMs, deadline);
  if (typeof echoes === 'string') return unreached(ctx, echoes, ip);
  const { sent, tried, rtts, sendError } = await echoes;
  const { count } = options;
  // Over the echoes tried (one the kernel refused is lost): those the timeout left no room for were never asked.
  const packetLoss = Math.round(((tried - rtts.length) / tried) * 1000) / 10;
  const unsent = count - tried;
  const cut = unsent > 0 ? `; ${unsent} not sent: the ${ctx.timeoutMs} ms timeout left no room for them` : '';
  const responseTimeMs = rtts.length ? Math.round((rtts.reduce((a, b) => a + b, 0) / rtts.length) * 1000) / 1000 : 0;
  const observation = { connected: rtts.length > 0, responseTimeMs, packetLoss, ip };
  if (sent === 0) return unreached(ctx, `echo to ${ip} not sent: ${sendError}`, ip);
  const outcome: Outcome = rtts.length
    ? {
        status: 'AVAILABLE',
        message: `${rtts.length} of ${tried} echoes came back from ${ip} (${packetLoss} % lost), average ${responseTimeMs} ms${cut}`,
        errorCode: null,
      }
    : {
        status: 'NOT_AVAILABLE',
        message: `no reply to ${tried} ${tried === 1 ? 'echo' : 'echoes'} from ${ip}${sendError ? ` (${sendError})` : ''}${cut}`,
        errorCode: 'PING_FAILED',
      };
  return conclude(ctx, outcome, observation, true, 'PACKET_LOSS');
};

/** The name's first address of the family (0: either), or why there is none. */
async function resolve(host: string, family: 0 | 4 | 6, timeoutMs: number): Promise<{ ip: string; family: IcmpFamily } | string> {
  const literal = isIP(host);
  if (literal) {
    if (family && literal !== family) return `${host} is not an IPv${family} address`;
    return { ip: host, family: literal as IcmpFamily };
  }
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string>((done) => {
    timer = setTimeout(() => done(`${host} did not resolve within ${timeoutMs} ms`), timeoutMs);
  });
  try {
    const found = lookup(host, { family }).then(
      (a) => ({ ip: a.address, family: a.family as IcmpFamily }),
      (err: NodeJS.ErrnoException) => `${host} does not resolve (${err.code ?? err.message})`,
    );
    return await Promise.race([found, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** The address's bytes for sendto(), through inet_pton (it validates, and expands `::`). */
function toBytes(ip: string, family: IcmpFamily): Buffer | null {
  const lib = libc();
  const out = Buffer.alloc(family === 4 ? 4 : 16);
  if (lib instanceof Error) return out; // the socket's open reports why
  return lib.inetPton(family === 4 ? AF_INET : AF_INET6, ip, out) === 1 ? out : null;
}

function unreached(ctx: ProtocolProbeContext, message: string, ip: string | null): Outcome {
  const outcome: Outcome = { status: 'NOT_AVAILABLE', message, errorCode: 'CONNECTION_ERROR' };
  return conclude(ctx, outcome, { connected: false, responseTimeMs: 0, packetLoss: 100, ip }, false);
}
