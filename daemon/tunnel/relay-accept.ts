import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { parseRemoteCheck } from '../../src/tunnel/probe-messages.ts';
import { PROBE_CHECK_LIMIT, PROBE_PROTOCOL, readJsonMessage } from '../../src/tunnel/probe-protocol.ts';
import { parseStreamTarget } from '../../src/tunnel/protocol.ts';
import { splice } from '../../src/tunnel/splice.ts';
import type { DaemonContext } from '../context.ts';
import type { RemoteOutcome } from '../tunnel-control.ts';
import { problem, rawProblem } from './raw-response.ts';
import type { AgentProbes } from './remote-probes.ts';
import type { AgentSessions } from './sessions.ts';
import { RELAY_AGENT_HEADER, RELAY_PATH, RELAY_PROBE_HEADER, RELAY_TARGET_HEADER, RELAY_UPGRADE, relayToken } from './tunnel-relay.ts';

/**
 * The holder's side of a relay (tunnel/tunnel-relay.ts): another pod of
 * the same database (it knows the relay token) asks for a stream to a
 * target through an agent connected here; the upgraded socket is piped to a
 * new tunnel stream, both ways (half-close kept), until both ends close. Or
 * it asks for a remote check: one JSON message each way (the check, the outcome).
 */
export function acceptRelay(
  ctx: DaemonContext,
  sessions: AgentSessions,
  probes: AgentProbes,
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
): boolean {
  if ((req.url ?? '').split('?')[0] !== RELAY_PATH) return false;
  socket.on('error', () => socket.destroy());
  const given = Buffer.from(String(req.headers.authorization ?? ''));
  const expected = Buffer.from(`Bearer ${relayToken(ctx)}`);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    rawProblem(socket, problem(401, 'unauthorized', 'Not a pod of this database'), RELAY_PATH);
    return true;
  }
  if (String(req.headers.upgrade ?? '').toLowerCase() !== RELAY_UPGRADE) {
    rawProblem(socket, problem(400, 'bad-upgrade', `Upgrade must be ${RELAY_UPGRADE}`), RELAY_PATH);
    return true;
  }
  const agentId = Number(req.headers[RELAY_AGENT_HEADER]);
  const probeName = req.headers[RELAY_PROBE_HEADER];
  if (typeof probeName === 'string') {
    if (!sessions.get(agentId) || ctx.draining) {
      rawProblem(socket, problem(404, 'agent-unavailable', 'The agent is not connected to this pod'), RELAY_PATH);
      return true;
    }
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: ${RELAY_UPGRADE}\r\n\r\n`);
    if (head.length > 0) socket.unshift(head);
    void (async () => {
      // Read as the agent reads it: a pod of another version could send what this one would not.
      const check = parseRemoteCheck(await readJsonMessage(socket, PROBE_CHECK_LIMIT), PROBE_PROTOCOL);
      const name = decodeURIComponent(probeName);
      const outcome: RemoteOutcome =
        typeof check === 'string'
          ? { ran: false, message: `agent ${name}'s pod refused the check: ${check}` }
          : await probes.probe(agentId, name, check);
      socket.end(JSON.stringify(outcome));
    })().catch(() => socket.destroy());
    return true;
  }
  let target;
  try {
    target = parseStreamTarget(JSON.parse(String(req.headers[RELAY_TARGET_HEADER] ?? '')));
  } catch {
    target = undefined;
  }
  const link = sessions.get(agentId);
  if (!target) {
    rawProblem(socket, problem(400, 'bad-target', 'invalid relay target'), RELAY_PATH);
    return true;
  }
  if (!link || ctx.draining) {
    rawProblem(socket, problem(404, 'agent-unavailable', 'The agent is not connected to this pod'), RELAY_PATH);
    return true;
  }
  let stream;
  try {
    // Half-close kept both ways (TCP routes need it; HTTP connections end as their pool decides).
    stream = link.mux.open(target, { allowHalfOpen: true });
  } catch (err) {
    rawProblem(socket, problem(503, 'agent-unavailable', `tunnel: ${(err as Error).message}`), RELAY_PATH);
    return true;
  }
  socket.write(`HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: ${RELAY_UPGRADE}\r\n\r\n`);
  if (head.length > 0) stream.write(head);
  splice(socket, stream, () => {});
  return true;
}
