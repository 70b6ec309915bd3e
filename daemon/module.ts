import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { DaemonContext } from './context.ts';
import type { Handlers } from './http/bind.ts';
import type { EdgeRouter } from './http/edge.ts';
import type { EdgeTlsProvider } from './http/edge-tls.ts';
import type { RouteHandler, RouterLike } from './http/router-like.ts';

/**
 * A capability of the daemon (auth, monitoring, probes, tunnel, …). Each one
 * lives in its own folder and contributes handlers for its operations, maybe
 * middleware and raw routes, and a lifecycle.
 */
export interface DaemonModule {
  name: string;
  handlers?: Handlers;
  /** Runs before any route, in module order (CORS, for example). */
  middleware?: RouteHandler[];
  /** Routes outside the operation table: pages, static files, metrics, the tunnel upgrade. */
  routes?(router: RouterLike): void;
  /** HTTP upgrades on the API listener (the agent's `GET /admin/tunnel`): return true when handled. */
  upgrade?(req: IncomingMessage, socket: Duplex, head: Buffer): boolean;
  /** The router of the edge listener; at most one module provides it. */
  edge?: EdgeRouter;
  /**
   * Answers edge requests before the edge router (status pages on their
   * custom hostname): returns true when it took the request.
   */
  edgeFront?(req: IncomingMessage, res: ServerResponse): boolean;
  /** The certificates of the HTTPS edge, by SNI name; at most one module provides them. */
  edgeTls?: EdgeTlsProvider;
  /** Called once the API listener is up. */
  start?(): Promise<void> | void;
  /**
   * Called when draining starts, before the listeners are awaited: upgraded
   * sockets (agent tunnels, edge WebSockets) would otherwise keep them open.
   */
  drain?(): Promise<void> | void;
  /** Called on shutdown, in reverse module order, before the database closes. */
  stop?(): Promise<void> | void;
}

export type ModuleFactory = (ctx: DaemonContext) => DaemonModule | Promise<DaemonModule>;
