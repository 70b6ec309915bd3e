import { createHmac } from 'node:crypto';
import { request } from 'node:http';
import { request as tlsRequest } from 'node:https';
import type { Duplex } from 'node:stream';
import { PROBE_ANSWER_LIMIT, readJsonMessage, type RemoteCheck } from '../../src/tunnel/probe-protocol.ts';
import type { StreamTarget } from '../../src/tunnel/protocol.ts';
import type { DaemonContext } from '../context.ts';
import { AGENT_GRACE_MS, type RemoteOutcome } from '../tunnel-control.ts';
import { KeptAlivePool, TargetConnection } from './target-connection.ts';

/** The upgrade a pod answers for another pod's edge (tunnel/relay-accept.ts). */
export const RELAY_PATH = '/admin/tunnel/relay';
export const RELAY_UPGRADE = 'monctl-relay';
export const RELAY_AGENT_HEADER = 'x-monctl-relay-agent';
export const RELAY_TARGET_HEADER = 'x-monctl-relay-target';
/** A remote check instead of a stream: the agent's name (the holder runs the check through its session). */
export const RELAY_PROBE_HEADER = 'x-monctl-relay-probe';
/** Where an agent's session is, looked up again after this long (an agent that moved is found within it). */
const HOLDER_TTL_MS = 1_000;
const DIAL_TIMEOUT_MS = 5_000;
/** Idle relay connections kept per (pod, agent, target). */
const MAX_FREE = 64;

/** The pods' shared credential for relays: derived from the install secret, which only the database holds. */
export function relayToken(ctx: DaemonContext): string {
  return createHmac('sha256', ctx.installSecret).update('monctl pod relay v1').digest('base64url');
}

/**
 * The tunnel across pods (DECISIONS, "Several daemons"): an edge request for
 * an agent whose session is on another pod goes there. This pod finds the
 * holder (`agents.pod_id`, the member's API URL), opens an authenticated
 * upgrade on its API listener which it pipes to a tunnel stream to the
 * target, and speaks HTTP/1.1 to the target over that socket exactly as over
 * a local stream (the same TargetConnection, kept alive and pooled).
 */
export class PodRelay {
  readonly #ctx: DaemonContext;
  readonly #self: string;
  readonly #holders = new Map<number, { url: string | undefined; at: number }>();
  readonly #pools = new Map<string, RelayPool>();
  #token: string | undefined;

  constructor(ctx: DaemonContext) {
    this.#ctx = ctx;
    this.#self = ctx.pod.name;
  }

  /** The API URL of the live pod holding the agent's session (not this one), if any. */
  async holder(agentId: number): Promise<string | undefined> {
    const cached = this.#holders.get(agentId);
    if (cached && Date.now() - cached.at < HOLDER_TTL_MS) return cached.url;
    const row = await this.#ctx.db
      .selectFrom('agents')
      .innerJoin('pods', 'pods.id', 'agents.pod_id')
      .innerJoin('cluster_members', 'cluster_members.pod_name', 'pods.name')
      .select('cluster_members.api_url')
      .where('agents.id', '=', agentId)
      .where('agents.status', '=', 'CONNECTED')
      .where('pods.name', '!=', this.#self)
      .where('cluster_members.api_url', 'is not', null)
      .orderBy('cluster_members.heartbeat_at', 'desc')
      .limit(1)
      .executeTakeFirst();
    const url = row?.api_url ?? undefined;
    this.#holders.set(agentId, { url, at: Date.now() });
    return url;
  }

  /** A kept-alive relay connection to the target through the pod at `url`. */
  async acquire(url: string, agentId: number, target: StreamTarget): Promise<TargetConnection> {
    const key = `${url}|${agentId}|${target.tls ? 's' : ''}${target.host}:${target.port}`;
    let pool = this.#pools.get(key);
    if (!pool) {
      this.#token ??= relayToken(this.#ctx);
      pool = new RelayPool(url, this.#token, agentId, target);
      this.#pools.set(key, pool);
    }
    try {
      return await pool.acquire();
    } catch (err) {
      // The holder is gone or no longer holds the session: look again on the next request.
      this.#holders.delete(agentId);
      this.#pools.delete(key);
      throw err;
    }
  }

  /** A fresh relay socket to the target through the pod at `url`, never pooled (an upgrade takes it over). */
  dial(url: string, agentId: number, target: StreamTarget): Promise<Duplex> {
    this.#token ??= relayToken(this.#ctx);
    return dialRelay(url, this.#token, agentId, target).catch((err: unknown) => {
      this.#holders.delete(agentId);
      throw err;
    });
  }

  /**
   * A remote check through the pod holding the agent's session: the check
   * goes as one JSON message, the holder runs it (its queue and load count
   * it) and answers the outcome as one JSON message.
   */
  async probe(url: string, agentId: number, name: string, check: RemoteCheck): Promise<RemoteOutcome> {
    this.#token ??= relayToken(this.#ctx);
    let socket: Duplex;
    try {
      socket = await dialRelay(url, this.#token, agentId, undefined, name);
    } catch (err) {
      this.#holders.delete(agentId);
      return { ran: false, message: `agent ${name} is not reachable through its pod: ${(err as Error).message}` };
    }
    // The holder gives up on the agent after the check's timeout plus its grace; a little more for the hop.
    const timer = setTimeout(
      () => socket.destroy(new Error('no answer in time')),
      (check.checkTimeoutMs ?? check.timeoutMs) + AGENT_GRACE_MS + 2_000,
    );
    try {
      socket.end(JSON.stringify(check));
      const outcome = (await readJsonMessage(socket, PROBE_ANSWER_LIMIT)) as RemoteOutcome;
      if (typeof outcome !== 'object' || outcome === null || typeof outcome.ran !== 'boolean') throw new Error('not a check outcome');
      return outcome;
    } catch (err) {
      return { ran: false, message: `agent ${name}'s pod did not answer the check: ${(err as Error).message}` };
    } finally {
      clearTimeout(timer);
      socket.destroy();
    }
  }

  close(): void {
    for (const pool of this.#pools.values()) pool.destroy();
    this.#pools.clear();
  }
}

/** Kept-alive relay connections to one target through the agent's session on another pod. */
class RelayPool extends KeptAlivePool {
  readonly #dial: () => Promise<Duplex>;

  constructor(url: string, token: string, agentId: number, target: StreamTarget) {
    super(MAX_FREE);
    this.#dial = () => dialRelay(url, token, agentId, target);
  }

  async acquire(): Promise<TargetConnection> {
    return this.idle() ?? new TargetConnection(this, await this.#dial());
  }
}

function dialRelay(url: string, token: string, agentId: number, target: StreamTarget | undefined, probe?: string): Promise<Duplex> {
  const { hostname, port, protocol } = new URL(url);
  // An API on HTTPS (--tls-cert) is dialled with TLS, verified as any client would (NODE_EXTRA_CA_CERTS for a private CA).
  const send = protocol === 'https:' ? tlsRequest : request;
  return new Promise((resolve, reject) => {
    const req = send({
      host: hostname.replace(/^\[|\]$/g, ''),
      port,
      path: RELAY_PATH,
      method: 'GET',
      agent: false,
      timeout: DIAL_TIMEOUT_MS,
      headers: {
        connection: 'Upgrade',
        upgrade: RELAY_UPGRADE,
        authorization: `Bearer ${token}`,
        [RELAY_AGENT_HEADER]: String(agentId),
        ...(target ? { [RELAY_TARGET_HEADER]: JSON.stringify(target) } : {}),
        ...(probe !== undefined ? { [RELAY_PROBE_HEADER]: encodeURIComponent(probe) } : {}),
      },
    });
    req.on('upgrade', (_res, socket, head) => {
      socket.setTimeout(0);
      // As a tunnel stream: one side's end does not end the other (TCP routes half-close).
      socket.allowHalfOpen = true;
      socket.setNoDelay(true);
      if (head.length > 0) socket.unshift(head);
      resolve(socket);
    });
    req.on('response', (res) => {
      res.resume();
      reject(new Error(`the pod holding the agent's session answered ${res.statusCode}`));
    });
    req.on('timeout', () => req.destroy(new Error("the pod holding the agent's session did not answer")));
    req.on('error', reject);
    req.end();
  });
}
