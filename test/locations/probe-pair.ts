import type { Logger } from 'pino';
import type { ProbeServer } from '../../cli/agent/probes.ts';
import { createStreamHandler } from '../../cli/agent/serve.ts';
import { AgentProbes, type AgentProbeDeps } from '../../daemon/tunnel/remote-probes.ts';
import type { AgentSessions } from '../../daemon/tunnel/sessions.ts';
import type { MuxStream } from '../../src/tunnel/mux/stream.ts';
import { PROBE_PROTOCOL, type ProbeSupport, probeStreamTarget, probeVersionOf } from '../../src/tunnel/probe-protocol.ts';
import { errorOf, type MuxPair } from '../tunnel/mux-helpers.ts';

/**
 * The two ends of remote checks over a real loopback mux session: the daemon's AgentProbes with
 * agent 1 on `pair` (announcing `support`), and the agent's ProbeServer behind the relay's stream
 * handler, as cli/agent/agent.ts wires it.
 */
export function daemonSide(ctx: AgentProbeDeps, pair: MuxPair, support: ProbeSupport | undefined): AgentProbes {
  const link = { agentId: 1, mux: pair.opener, probes: support, version: '0.0.9' };
  const sessions = { get: (id: number) => (id === 1 ? link : undefined) } as unknown as AgentSessions;
  return new AgentProbes(ctx, sessions);
}

/** The agent's side: probe streams to `server`, anything else to the relay. */
export function agentSide(pair: MuxPair, server: ProbeServer, log: Logger): void {
  const relay = createStreamHandler({ skipTls: false, targetTimeoutMs: 1_000, log });
  pair.acceptor.on('stream', (stream: MuxStream, raw: unknown) => {
    const version = probeVersionOf(raw);
    if (version === undefined) relay(stream, raw);
    else server.serve(stream, version);
  });
}

/** A raw probe stream of `version` carrying `text`: the agent's reset (code and message), or its answer. */
export async function sendRaw(pair: MuxPair, text: string | Buffer, version = PROBE_PROTOCOL) {
  const stream: MuxStream = pair.opener.open(probeStreamTarget(version));
  const chunks: Buffer[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c));
  const done = new Promise<{ answer?: unknown; code?: string; message?: string }>((resolve) => {
    stream.once('end', () => resolve({ answer: JSON.parse(Buffer.concat(chunks).toString()) }));
    errorOf(stream).then((err) => resolve({ code: err.code, message: err.message }));
  });
  stream.end(text);
  return done;
}
