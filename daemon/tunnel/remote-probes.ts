import { Counter } from 'prom-client';
import type { ProbeLoad } from '../../src/api/schemas/tunnel.ts';
import { StreamError } from '../../src/tunnel/mux/stream.ts';
import { parseRemoteAnswer, protocol2Needs } from '../../src/tunnel/probe-messages.ts';
import {
  OLD_AGENT_RESET,
  PROBE_ANSWER_LIMIT,
  PROBE_CHECK_LIMIT,
  PROBE_PROTOCOL,
  PROBE_RESET,
  probeStreamTarget,
  readJsonMessage,
  type RemoteCheck,
} from '../../src/tunnel/probe-protocol.ts';
import type { PodRelay } from './tunnel-relay.ts';
import type { DaemonContext } from '../context.ts';
import { AGENT_GRACE_MS, type RemoteOutcome } from '../tunnel-control.ts';
import { publishTopology } from '../tunnel-admin/topology-events.ts';
import type { AgentSessions } from './sessions.ts';

/** How often changed probe loads go out on the topology stream. */
const LOAD_EVERY_MS = 5_000;

/** Checks answered per second over the last minute, in flight, skipped: one agent's probe load. */
class Load {
  inFlight = 0;
  skipped = 0;
  readonly #ring = new Uint32Array(60);
  #second = 0;
  published = '';

  answered(): void {
    this.#roll();
    this.#ring[this.#second % 60]++;
  }

  perMinute(): number {
    this.#roll();
    let sum = 0;
    for (const n of this.#ring) sum += n;
    return sum;
  }

  #roll(): void {
    const now = Math.floor(Date.now() / 1000);
    if (now === this.#second) return;
    for (let s = Math.max(this.#second + 1, now - 59); s <= now; s++) this.#ring[s % 60] = 0;
    this.#second = now;
  }
}

/** What the agents' side of remote checks uses of the daemon. */
export type AgentProbeDeps = Pick<DaemonContext, 'db' | 'metrics' | 'events' | 'pod'>;

/**
 * The daemon's side of remote checks: each check is one probe stream on the
 * agent's tunnel session (src/tunnel/probe-protocol.ts). An agent that is not
 * connected, too old, or whose queue is full is not sent the check; one that
 * does not answer within the check's timeout plus AGENT_GRACE_MS is given up
 * on (the stream is reset, so the agent drops it too). An agent that speaks
 * protocol 1 is sent only what protocol 1 carries; a check that needs more is
 * not sent. None of those is a failed check: the location is `unknown`, with
 * the reason.
 */
export class AgentProbes {
  readonly #ctx: AgentProbeDeps;
  readonly #sessions: AgentSessions;
  readonly #loads = new Map<number, Load>();
  readonly #skipped: Counter<'agent'>;
  readonly #timer: NodeJS.Timeout;
  readonly #relay: PodRelay | undefined;

  /** `relay` (pods): a check for an agent connected to another pod goes there. */
  constructor(ctx: AgentProbeDeps, sessions: AgentSessions, relay?: PodRelay) {
    this.#ctx = ctx;
    this.#sessions = sessions;
    this.#relay = relay;
    const registry = ctx.metrics.registry;
    this.#skipped =
      (registry.getSingleMetric('monctl_agent_checks_skipped_total') as Counter<'agent'> | undefined) ??
      new Counter({
        name: 'monctl_agent_checks_skipped_total',
        labelNames: ['agent'] as const,
        registers: [registry],
        help: 'Checks the daemon did not send to an agent because its probe queue was full',
      });
    this.#timer = setInterval(() => this.#publish(), LOAD_EVERY_MS);
    this.#timer.unref();
  }

  async probe(agentId: number, name: string, check: RemoteCheck): Promise<RemoteOutcome> {
    const link = this.#sessions.get(agentId);
    if (!link) {
      const holder = await this.#relay?.holder(agentId).catch(() => undefined);
      if (holder) return this.#relay!.probe(holder, agentId, name, check);
      return { ran: false, message: await this.#notHere(agentId, name) };
    }
    if (!link.probes) {
      return {
        ran: false,
        message: `agent ${name} (monctl ${link.version ?? 'of an unknown version'}) does not support remote checks: upgrade it to run checks there`,
      };
    }
    const version = Math.min(link.probes.protocol, PROBE_PROTOCOL);
    const wire = version < 2 ? protocol1Check(check) : check;
    if (typeof wire === 'string') {
      return {
        ran: false,
        message: `agent ${name} speaks probe protocol ${link.probes.protocol}; this check needs protocol 2 (${wire}): upgrade the agent to run it there`,
      };
    }
    const text = JSON.stringify(wire);
    const size = Buffer.byteLength(text);
    if (size > PROBE_CHECK_LIMIT)
      return { ran: false, message: `the check is too large to send to agent ${name} (${size} bytes; at most ${PROBE_CHECK_LIMIT})` };
    const load = this.#load(agentId);
    const capacity = link.probes.concurrency + link.probes.queue;
    if (load.inFlight >= capacity) {
      load.skipped++;
      this.#skipped.inc({ agent: name });
      return { ran: false, message: `skipped: the probe queue of agent ${name} is full (${load.inFlight} checks outstanding)` };
    }
    let stream;
    try {
      stream = link.mux.open(probeStreamTarget(version));
    } catch (err) {
      return { ran: false, message: `agent ${name} is going away: ${(err as Error).message}` };
    }
    load.inFlight++;
    const limitMs = (check.checkTimeoutMs ?? check.timeoutMs) + AGENT_GRACE_MS;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      stream.destroy(new StreamError('CANCEL', 'no answer in time'));
    }, limitMs);
    try {
      stream.end(text);
      const answer = parseRemoteAnswer(await readJsonMessage(stream, PROBE_ANSWER_LIMIT));
      if (!answer) return { ran: false, message: `agent ${name} answered something that is not a check result` };
      load.answered();
      return { ran: true, ...answer };
    } catch (err) {
      return {
        ran: false,
        message: timedOut
          ? `timeout at agent ${name}: no answer within ${limitMs / 1000} s`
          : why(name, version, err as Error & { code?: string }),
      };
    } finally {
      clearTimeout(timer);
      load.inFlight--;
    }
  }

  /** An agent's probe load as this daemon sees it. */
  load(agentId: number): ProbeLoad {
    const load = this.#loads.get(agentId);
    return { agentId, checksPerMinute: load?.perMinute() ?? 0, inFlight: load?.inFlight ?? 0, skipped: load?.skipped ?? 0 };
  }

  close(): void {
    clearInterval(this.#timer);
  }

  /**
   * Why an agent without a session here cannot check: not connected, or
   * (several pods) connected to a pod that no relay could reach. A single
   * daemon holds every session itself, so it asks the database nothing (this
   * runs for each check of an absent agent).
   */
  async #notHere(agentId: number, name: string): Promise<string> {
    if (!this.#relay) return `agent ${name} is not connected`;
    const row = await this.#ctx.db
      .selectFrom('agents')
      .leftJoin('pods', 'pods.id', 'agents.pod_id')
      .select(['agents.status', 'pods.name as pod'])
      .where('agents.id', '=', agentId)
      .executeTakeFirst()
      .catch(() => undefined);
    if (row?.status === 'CONNECTED' && row.pod) {
      const here = this.#ctx.pod.name;
      if (row.pod !== here) return `agent ${name} is connected to pod ${row.pod}, not to pod ${here} which checks this resource`;
    }
    return `agent ${name} is not connected`;
  }

  #load(agentId: number): Load {
    let load = this.#loads.get(agentId);
    if (!load) {
      load = new Load();
      this.#loads.set(agentId, load);
    }
    return load;
  }

  /** PROBE_LOAD for each agent whose numbers moved since they last went out. */
  #publish(): void {
    for (const [agentId, load] of this.#loads) {
      const now = this.load(agentId);
      const key = `${now.checksPerMinute}/${now.inFlight}/${now.skipped}`;
      if (key === load.published) continue;
      load.published = key;
      publishTopology(this.#ctx, 'PROBE_LOAD', now);
    }
  }
}

/**
 * The check as protocol 1 carries it, or what it needs of protocol 2 (in words). The hints of
 * protocol 2 that change no verdict (resourceId, maxBodyBytes) are left out.
 */
function protocol1Check(check: RemoteCheck): RemoteCheck | string {
  const needs = protocol2Needs(check);
  if (needs.length) return needs.join(', ');
  const { type, target, skipTLS, recursive, timeoutMs, credential } = check;
  return credential ? { type, target, skipTLS, recursive, timeoutMs, credential } : { type, target, skipTLS, recursive, timeoutMs };
}

/** Why a probe stream failed, for the location's `unknown`. */
function why(name: string, version: number, err: Error & { code?: string }): string {
  if (err.code === PROBE_RESET.unsupported || err.code === OLD_AGENT_RESET) {
    return `agent ${name} does not support remote checks (probe protocol ${version}; it answered: ${err.message}): upgrade it to run checks there`;
  }
  if (err.code === PROBE_RESET.busy) return `skipped: agent ${name} is busy (${err.message})`;
  if (err.code?.startsWith('ERR_TUNNEL_')) return `agent ${name} disconnected during the check (${err.message})`;
  return `agent ${name} could not run the check: ${err.message}`;
}
