import net, { type Server, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { splice } from '../../src/tunnel/splice.ts';
import type { PodRelay } from './tunnel-relay.ts';
import type { DaemonContext } from '../context.ts';
import { parseTcpTarget } from '../tunnel-admin/route-rules.ts';
import type { EdgeGate } from './access/gate.ts';
import type { ExchangeInfo, Observer } from './observe.ts';
import type { LiveMember, LiveRoute } from './route-table.ts';
import type { AgentSessions } from './sessions.ts';
import type { PoolBalancer } from './pool/balancer.ts';
import type { RemoteAgents } from './pool/remote-agents.ts';
import { NO_AGENT } from './pool/unavailable.ts';

interface Listener {
  route: LiveRoute;
  server: Server;
  sockets: Set<Socket>;
}

/**
 * One TCP listener per enabled TCP route, on the edge listener's host and the
 * route's `listenPort`. Each connection becomes one tunnel stream to the agent,
 * which connects to `host:port`; bytes are piped both ways, half-close kept.
 * Each connection takes an agent of the route's pool (pool/balancer.ts).
 * Pods: an agent connected to another pod is reached through it (the relay).
 * The route's ipAllow, ipDeny and rateLimit are checked at accept against the
 * route as it is now (`sync` swaps it in place): a change applies to the next
 * connection without restarting the listener.
 */
export class TcpListeners {
  readonly #ctx: DaemonContext;
  readonly #sessions: AgentSessions;
  readonly #observer: Observer;
  readonly #gate: EdgeGate;
  readonly #byRoute = new Map<number, Listener>();
  readonly #relay: PodRelay | undefined;
  readonly #balancer: PoolBalancer;
  readonly #remote: RemoteAgents | undefined;

  constructor(
    ctx: DaemonContext,
    sessions: AgentSessions,
    observer: Observer,
    gate: EdgeGate,
    balancer: PoolBalancer,
    relay?: PodRelay,
    remote?: RemoteAgents,
  ) {
    this.#ctx = ctx;
    this.#balancer = balancer;
    this.#remote = remote;
    this.#sessions = sessions;
    this.#observer = observer;
    this.#gate = gate;
    this.#relay = relay;
  }

  /** Starts, keeps (updating target and agent in place) or stops listeners to match the routes. */
  sync(routes: LiveRoute[]): void {
    if (this.#ctx.draining) return;
    const wanted = new Map(routes.filter((r) => r.listenPort).map((r) => [r.id, r]));
    for (const [id, listener] of this.#byRoute) {
      const route = wanted.get(id);
      if (route && route.listenPort === listener.route.listenPort) listener.route = route;
      else this.#stop(id, listener);
    }
    for (const route of wanted.values()) if (!this.#byRoute.has(route.id)) this.#start(route);
  }

  #start(route: LiveRoute): void {
    const sockets = new Set<Socket>();
    const server = net.createServer({ allowHalfOpen: true, noDelay: true });
    const listener: Listener = { route, server, sockets };
    server.on('connection', (socket) => this.#pipe(listener, socket));
    server.on('error', (err) => {
      this.#ctx.log.error({ err, routeId: route.id, port: route.listenPort }, 'tunnel: TCP route cannot listen');
      if (this.#byRoute.get(route.id) === listener) this.#byRoute.delete(route.id);
    });
    server.listen(route.listenPort!, this.#ctx.config.edgeListen.host, () => {
      this.#ctx.log.info({ routeId: route.id, port: route.listenPort }, 'tunnel: TCP route listening');
    });
    this.#byRoute.set(route.id, listener);
  }

  #stop(id: number, listener: Listener): void {
    this.#byRoute.delete(id);
    listener.server.close();
    for (const socket of listener.sockets) socket.destroy();
  }

  #pipe(listener: Listener, socket: Socket): void {
    const { route } = listener;
    listener.sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => listener.sockets.delete(socket));
    // Raw TCP carries no X-Forwarded-For: the client is the peer (--trusted-proxies does not apply).
    const ip = socket.remoteAddress?.replace(/^::ffff:/, '') ?? null;
    const info = { method: 'TCP', path: route.target, clientIp: ip };
    // Access control at accept: a refused connection is closed before a byte is read or the agent is dialled.
    const refusal = route.access.open ? undefined : this.#gate.checkClient(route, ip ?? '');
    if (refusal) {
      socket.destroy();
      return this.#observer.begin(route, info).finish(null, refusal.message);
    }
    // One agent of the pool per connection (pool/balancer.ts); pods look again; none in the rotation: closed.
    const member = this.#balancer.pick(route, ip);
    if (member) return this.#through(route, socket, info, member);
    if (!this.#remote) return this.#unserved(route, socket, info);
    socket.pause();
    void this.#remote.refresh().then((again) => {
      const next = again && !socket.destroyed ? this.#balancer.pick(route, ip) : undefined;
      if (!next) return this.#unserved(route, socket, info);
      this.#through(route, socket, info, next); // resumes the socket once its stream is there
    });
  }

  #unserved(route: LiveRoute, socket: Socket, info: ExchangeInfo): void {
    socket.destroy();
    this.#observer.begin(route, info).finish(null, NO_AGENT.detail);
  }

  #through(route: LiveRoute, socket: Socket, info: ExchangeInfo, member: LiveMember): void {
    const exchange = this.#observer.begin(route, info, member.agentId);
    const link = this.#sessions.get(member.agentId);
    const target = parseTcpTarget(member.target);
    const failed = (err: unknown) => {
      exchange.finish(null, (err as Error).message);
      socket.destroy();
    };
    const connected = (stream: Duplex) => {
      socket.on('data', (c: Buffer) => {
        exchange.bytesIn += c.length;
      });
      stream.on('data', (c: Buffer) => {
        exchange.bytesOut += c.length;
      });
      splice(socket, stream, (err) => exchange.finish(null, err?.message));
    };
    const holder = link ? undefined : this.#remote?.url(member.agentId);
    try {
      if (!target) throw new Error('invalid TCP target');
      if (link) {
        connected(link.mux.open(target, { allowHalfOpen: true }));
        return void socket.resume();
      }
      if (!this.#relay || !holder) throw new Error('agent not connected');
    } catch (err) {
      return failed(err);
    }
    const relay = this.#relay;
    socket.pause();
    void (async () => {
      const stream = await relay.dial(holder, member.agentId, target);
      if (socket.destroyed) return void stream.destroy();
      connected(stream);
      socket.resume();
    })().catch(failed);
  }

  closeAll(): void {
    for (const [id, listener] of this.#byRoute) this.#stop(id, listener);
  }
}
