import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { Counter } from 'prom-client';
import { collectBuffersSooner } from '../../src/tunnel/collect-buffers.ts';
import { MuxSession, STREAM_WINDOW, STREAM_WINDOW_INITIAL } from '../../src/tunnel/mux/session.ts';
import { keepalive } from '../../src/tunnel/mux/keepalive.ts';
import {
  AGENT_VERSION_HEADER,
  GOAWAY_REPLACED,
  PING_INTERVAL_MS,
  PING_TIMEOUT_MS,
  STREAM_WINDOW_HEADER,
  type StreamTarget,
  TARGET_TIMEOUT_HEADER,
  TUNNEL_PATH,
  WINDOW_GROWTH_HEADER,
  TUNNEL_UPGRADE,
} from '../../src/tunnel/protocol.ts';
import type { DaemonContext } from '../context.ts';
import { parseProbesHeader, PROBES_HEADER, type ProbeSupport } from '../../src/tunnel/probe-protocol.ts';
import { findAgentByToken } from '../tunnel-admin/agent-auth.ts';
import { markConnected, markDisconnected, markSeen } from '../tunnel-admin/agent-status.ts';
import { DialGuard } from './dial-guard.ts';
import { TargetPool } from './target-connection.ts';
import { problem, rawProblem } from './raw-response.ts';

/** One live agent connection: a mux session over the upgraded socket. */
export interface Link {
  agentId: number;
  mux: MuxSession;
  /** Set when a newer session of the same agent took over: its close is not a disconnect. */
  superseded: boolean;
  reason: string;
  /** The agent's --target-timeout: how long the target may take to answer with headers. */
  targetTimeoutMs: number;
  /** Keep-alive HTTP connections per target (key: host, port, tls). */
  pools: Map<string, TargetPool>;
  /** What the agent said about remote checks on its dial; undefined: it runs none. */
  probes?: ProbeSupport;
  /** The agent's version, as it said on its dial. */
  version?: string;
  /** When the unanswered keepalive PING left (0: none), and the session's bytes read then (pool/rotation.ts). */
  pingAt: number;
  pingRead: number;
}

/** Used when an agent does not say its target timeout. */
const DEFAULT_TARGET_TIMEOUT_MS = 30_000;

/** How often a live agent's lastSeenAt is written (the pings are far more frequent). */
const SEEN_EVERY_MS = 30_000;

/** Why the daemon cut a session: a protocol error (ping flood included), a peer that does not read, no PONG. */
const DROP_REASONS = { ERR_TUNNEL_PROTOCOL: 'protocol', ERR_TUNNEL_OVERLOAD: 'overload', keepalive: 'keepalive' } as const;

/**
 * The agents connected to this daemon. Accepts `GET /admin/tunnel` upgrades,
 * authenticates the registration token before answering 101, keeps each
 * session alive with pings and reports connects and disconnects.
 */
export class AgentSessions {
  readonly #ctx: DaemonContext;
  readonly #podId: () => number;
  readonly #links = new Map<number, Link>();
  readonly #onCount: (n: number) => void;
  readonly #guard: DialGuard;
  readonly #dropped: Counter<'reason'>;

  constructor(ctx: DaemonContext, podId: () => number, onCount: (n: number) => void) {
    this.#ctx = ctx;
    this.#guard = new DialGuard(ctx);
    this.#podId = podId;
    this.#onCount = onCount;
    const registry = ctx.metrics.registry;
    this.#dropped =
      (registry.getSingleMetric('monctl_tunnel_sessions_dropped_total') as Counter<'reason'> | undefined) ??
      new Counter({
        name: 'monctl_tunnel_sessions_dropped_total',
        labelNames: ['reason'] as const,
        registers: [registry],
        help: 'Agent sessions the daemon cut, by reason: protocol (ping flood included), overload (the agent does not read), keepalive',
      });
    for (const reason of Object.values(DROP_REASONS)) this.#dropped.inc({ reason }, 0);
  }

  /** The live session of an agent, if any. */
  get(agentId: number): Link | undefined {
    const link = this.#links.get(agentId);
    return link && !link.mux.destroyed ? link : undefined;
  }

  /** The keep-alive pool of a link towards one target. */
  pool(link: Link, target: StreamTarget): TargetPool {
    const key = `${target.tls ? 's' : ''}${target.host}:${target.port}`;
    let pool = link.pools.get(key);
    if (!pool) {
      pool = new TargetPool(link.mux, target);
      link.pools.set(key, pool);
    }
    return pool;
  }

  /** The upgrade hook of the API listener. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean {
    if ((req.url ?? '').split('?')[0] !== TUNNEL_PATH) return false;
    this.#accept(req, socket as Socket, head).catch((err) => {
      this.#ctx.log.error({ err }, 'tunnel: accepting an agent failed');
      socket.destroy();
    });
    return true;
  }

  async #accept(req: IncomingMessage, socket: Socket, head: Buffer): Promise<void> {
    socket.on('error', () => {}); // reported through the session once it exists
    if (this.#ctx.draining) {
      this.#guard.refused('draining');
      return rawProblem(socket, problem(503, 'draining', 'The daemon is shutting down'), TUNNEL_PATH);
    }
    if (String(req.headers.upgrade ?? '').toLowerCase() !== TUNNEL_UPGRADE) {
      this.#guard.refused('bad_upgrade');
      return rawProblem(socket, problem(400, 'bad-upgrade', `Upgrade must be ${TUNNEL_UPGRADE}`), TUNNEL_PATH);
    }
    // A limited source is refused before its token is looked at: checking it would make the limit an oracle.
    const limited = this.#guard.admit(socket.remoteAddress);
    if (limited) return rawProblem(socket, limited, TUNNEL_PATH);
    const token = /^Bearer\s+(\S+)\s*$/i.exec(String(req.headers.authorization ?? ''))?.[1];
    let agent: Awaited<ReturnType<typeof findAgentByToken>>;
    try {
      agent = token ? await findAgentByToken(this.#ctx, token) : undefined;
    } catch (err) {
      this.#guard.settle(socket.remoteAddress, true); // the database failed, not the token
      throw err;
    }
    this.#guard.settle(socket.remoteAddress, agent !== undefined);
    if (!agent) {
      return rawProblem(
        socket,
        problem(401, 'unauthorized', 'Invalid or missing registration token', { 'WWW-Authenticate': 'Bearer' }),
        TUNNEL_PATH,
      );
    }
    if (socket.destroyed) return;
    const agentId = Number(agent.id);
    socket.setTimeout(0);
    socket.setNoDelay(true);
    socket.setKeepAlive(true, 10_000);
    // An agent that grows windows gets a small initial one for the DATA it sends us (so that a
    // reader that does not read then pulls 128 KiB, not 1 MiB); others keep the fixed 1 MiB.
    const grows = req.headers[WINDOW_GROWTH_HEADER] === '1';
    const windowField = grows ? `${STREAM_WINDOW_HEADER}: ${STREAM_WINDOW_INITIAL}\r\n` : '';
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: ${TUNNEL_UPGRADE}\r\n${windowField}\r\n`);
    if (head.length) socket.unshift(head);

    // Relayed bytes are short-lived buffers outside the JS heap: collected every 8 MB instead of 128 MB,
    // the daemon spent about 45 % less CPU per MB relayed (fewer fresh pages) and peaked lower.
    collectBuffersSooner(4);
    const mux = new MuxSession(socket, {
      opener: true,
      ...(grows ? { receiveWindow: { initial: STREAM_WINDOW_INITIAL, max: STREAM_WINDOW } } : {}),
    });
    const announced = Number(req.headers[TARGET_TIMEOUT_HEADER]);
    const dialVersion = req.headers[AGENT_VERSION_HEADER];
    const link: Link = {
      agentId,
      mux,
      superseded: false,
      reason: 'connection closed',
      pools: new Map(),
      pingAt: 0,
      pingRead: 0,
      probes: parseProbesHeader(req.headers[PROBES_HEADER]),
      version: typeof dialVersion === 'string' ? dialVersion : undefined,
      targetTimeoutMs: Number.isFinite(announced) && announced > 0 ? Math.min(announced, 3_600_000) : DEFAULT_TARGET_TIMEOUT_MS,
    };
    mux.on('goaway', (reason: string) => {
      link.reason = `the agent is going away${reason ? `: ${reason}` : ''}`;
      for (const pool of link.pools.values()) pool.dropIdle();
    });
    mux.once('close', (err?: NodeJS.ErrnoException) => {
      if (err && link.reason === 'connection closed' && err.code !== 'ERR_TUNNEL_CLOSED') link.reason = err.message;
      const dropped = link.reason === 'keepalive timeout' ? DROP_REASONS.keepalive : DROP_REASONS[err?.code as keyof typeof DROP_REASONS];
      if (dropped) {
        this.#dropped.inc({ reason: dropped });
        this.#ctx.log.warn({ agentId, reason: link.reason }, 'tunnel: agent session dropped');
      }
      for (const pool of link.pools.values()) pool.destroy();
      this.#closed(link);
    });
    this.#keepAlive(link);

    const previous = this.#links.get(agentId);
    this.#links.set(agentId, link);
    this.#onCount(this.#links.size);
    if (previous) {
      previous.superseded = true;
      this.#end(previous, GOAWAY_REPLACED, true);
    }
    const remoteAddress = socket.remoteAddress ?? '';
    const version = req.headers[AGENT_VERSION_HEADER];
    this.#ctx.log.info({ agentId, remoteAddress, replaced: Boolean(previous) }, 'tunnel: agent connected');
    await markConnected(this.#ctx, agentId, {
      podId: this.#podId(),
      remoteAddress,
      version: typeof version === 'string' ? version : null,
      replaced: Boolean(previous),
    });
  }

  /** Pings the agent; an agent silent past the timeout is dropped, which fails its streams at once. */
  #keepAlive(link: Link): void {
    let lastSeen = Date.now();
    keepalive(link.mux, {
      intervalMs: PING_INTERVAL_MS,
      timeoutMs: PING_TIMEOUT_MS,
      onDead: () => {
        link.reason = 'keepalive timeout';
        link.mux.destroy(new Error('keepalive timeout'));
      },
      onPing: () => {
        if (link.pingAt !== 0) return; // the older PING is still out: its time counts
        link.pingAt = Date.now();
        link.pingRead = link.mux.bytesRead;
      },
      onAnswer: () => {
        link.pingAt = 0;
        if (Date.now() - lastSeen < SEEN_EVERY_MS || this.#links.get(link.agentId) !== link) return;
        lastSeen = Date.now();
        markSeen(this.#ctx, link.agentId).catch(() => {});
      },
    });
  }

  #closed(link: Link): void {
    if (this.#links.get(link.agentId) !== link) return; // replaced: the newer session is current
    this.#links.delete(link.agentId);
    this.#onCount(this.#links.size);
    this.#ctx.log.info({ agentId: link.agentId, reason: link.reason }, 'tunnel: agent disconnected');
    markDisconnected(this.#ctx, link.agentId, link.reason).catch((err) => {
      if (!this.#ctx.draining) this.#ctx.log.error({ err }, 'tunnel: recording a disconnect failed');
    });
  }

  /** Tells the agent why (GOAWAY), then closes: at once, or after the exchanges in flight finish. */
  #end(link: Link, reason: string, now: boolean): void {
    link.reason = reason;
    const { mux } = link;
    if (mux.destroyed) return;
    mux.goaway(reason);
    // Destroyed with an error, so streams in flight are reset rather than ended cleanly.
    if (now) setImmediate(() => mux.destroy(new Error(reason)));
    else {
      for (const pool of link.pools.values()) pool.dropIdle();
      mux.close(reason);
    }
  }

  /** Token rotated or agent deleted: the live session goes now. */
  disconnect(agentId: number, reason: string): void {
    const link = this.#links.get(agentId);
    if (link) this.#end(link, reason, true);
  }

  /** Shutdown: let streams finish for graceMs, then cut what is left. */
  async closeAll(graceMs: number): Promise<void> {
    this.#guard.close();
    const links = [...this.#links.values()];
    if (!links.length) return;
    const closed = links.map(
      (l) =>
        new Promise<void>((done) => {
          if (l.mux.destroyed) return done();
          l.mux.once('close', () => done());
        }),
    );
    for (const link of links) this.#end(link, 'daemon shutting down', false);
    const timer = setTimeout(() => links.forEach((l) => l.mux.destroy(new Error('shutdown grace period over'))), graceMs);
    await Promise.all(closed);
    clearTimeout(timer);
  }
}
