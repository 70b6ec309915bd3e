import { chmodSync, existsSync, mkdirSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { Counter } from 'prom-client';
import { ApiKeys } from './auth/api-keys.ts';
import { loadInstallSecret } from './auth/install-secret.ts';
import { LoginThrottle } from './auth/login-throttle.ts';
import { Sessions } from './auth/sessions.ts';
import { guardStreams } from './auth/stream-guard.ts';
import { Bus } from './bus.ts';
import { relayBus } from './cluster/bus-relay.ts';
import { EventRelay } from './cluster/event-relay.ts';
import { shareLoginThrottle } from './cluster/login-sharing.ts';
import { PodMessages } from './cluster/pod-messages.ts';
import type { DaemonConfig } from './config.ts';
import type { DaemonContext } from './context.ts';
import { EventHub } from './events/channel.ts';
import { endAllStreams } from './events/sse.ts';
import { createApiHandler } from './http/app.ts';
import { shedSlowHeaders } from './http/shed-slow-headers.ts';
import { shedSlowH2Streams } from './http/shed-slow-h2-streams.ts';
import { isLingering, lingerOnClose, lingeringEnd } from './http/linger-close.ts';
import { shedSlowReaders } from './http/shed-slow-readers.ts';
import { rawProblemResponse } from './http/problem.ts';
import { type EdgeRouter, noRoutes } from './http/edge.ts';
import { createEdgeTlsServer, type EdgeTlsServer } from './http/edge-tls.ts';
import { type ApiServer, createApiServer, describeCertificate, loadTlsPair } from './http/tls.ts';
import { TlsReloader } from './http/tls-reload.ts';
import { OcspStapler } from './http/ocsp-stapler.ts';
import { createLogger } from './logger.ts';
import { logDestination } from '../src/log-format.ts';
import { createMetrics } from './metrics/metrics.ts';
import type { DaemonModule } from './module.ts';
import { moduleFactories } from './modules.ts';
import { lockDataDir } from './store/dialect/sqlite-lock.ts';
import { openStore } from './store/store.ts';
import { type RunningServices, startServices } from './services.ts';
import { logStorageHealth } from './store/storage-log.ts';
import { nothingConnected } from './tunnel-control.ts';

export interface RunningDaemon {
  ctx: DaemonContext;
  apiUrl: string;
  edgeUrl: string;
  /** The HTTPS edge (`--edge-tls-listen`), when configured. */
  edgeTlsUrl?: string;
  /** Lets the tunnel capability take over the edge listener. */
  setEdgeRouter(router: EdgeRouter): void;
  /** SIGHUP: re-reads what can change without a restart (the TLS certificate and key). */
  reload(trigger: string): void;
  stop(): Promise<void>;
}

/** Headers beyond this size are refused (431); the timeouts come from the settings (serverLimits). */
const MAX_HEADER_SIZE = 16 * 1024;

/**
 * Node enforces `requestTimeout` only from a sweep every
 * `connectionsCheckingInterval` (30 s by default), so a request could live
 * up to the limit plus the interval: 43 s measured for a 30 s limit. A sweep
 * every second (a tenth of the limit when it is shorter) keeps the overrun
 * within that; each sweep walks the connections still receiving a request.
 */
function checkingInterval(requestTimeout: number): number {
  return Math.min(1_000, Math.max(100, Math.floor(requestTimeout / 10)));
}

/** What the drain closes: the API listener and both edges. */
type Listener = ApiServer | EdgeTlsServer;

function listen(server: Listener, host: string, port: number): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}

function urlOf(address: AddressInfo, scheme = 'http'): string {
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `${scheme}://${host}:${address.port}`;
}

/** Slow or oversized clients are shed by these limits instead of holding sockets forever. */
function serverLimits(config: DaemonConfig) {
  const t = config.server;
  return {
    requestTimeout: t.requestTimeoutMs,
    headersTimeout: t.headersTimeoutMs,
    keepAliveTimeout: t.keepAliveTimeoutMs,
    maxHeaderSize: MAX_HEADER_SIZE,
    connectionsCheckingInterval: checkingInterval(t.requestTimeoutMs),
  };
}

export async function startDaemon(config: DaemonConfig): Promise<RunningDaemon> {
  // First: a certificate that cannot serve stops the start before anything is opened.
  const tlsPair = config.tls && loadTlsPair(config.tls);
  if (!existsSync(config.dataDir)) {
    mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
    chmodSync(config.dataDir, 0o700);
  }
  const log = createLogger(config.logLevel, await logDestination(config.logFormat));
  const limits = serverLimits(config);
  // One daemon per SQLite data directory: a second one exits here, naming the holder's PID.
  // On PostgreSQL several daemons (pods) share the database by design.
  const lock = config.databaseUrl ? { release() {} } : lockDataDir(config.dataDir);
  let store;
  try {
    store = await openStore(config.dataDir, config.databaseUrl);
  } catch (err) {
    lock.release();
    throw err;
  }
  logStorageHealth(store.health, log, config.dataDir);
  let ctx: DaemonContext;
  let relay: EventRelay | undefined;
  let services: RunningServices | undefined;
  const modules: DaemonModule[] = [];
  try {
    const installSecret = await loadInstallSecret(store.db);
    const bus = new Bus();
    // Pods on one PostgreSQL database: resource events and cache changes reach every pod.
    const cluster = store.notifications && new PodMessages(store.notifications, log);
    if (cluster) relayBus(bus, cluster);
    const events = new EventHub();
    const metrics = createMetrics();
    if (cluster)
      relay = await EventRelay.start(store.db, store.notifications!, events, cluster.instance, log, config.podEvents, metrics.registry);
    const keys = new ApiKeys(store.db, installSecret);
    const sessions = new Sessions(store.db, installSecret);
    // The shared services, built here once and in the open: no module creates one for the others.
    services = await startServices({ config, db: store.db, log, bus, events, installSecret });
    ctx = {
      config,
      log,
      store,
      db: store.db,
      metrics,
      events,
      bus,
      cluster,
      keys,
      sessions,
      streams: guardStreams(keys, sessions, config, log, metrics.registry, cluster),
      loginThrottle: new LoginThrottle(),
      installSecret,
      tunnel: nothingConnected,
      draining: false,
      ...services.services,
    };
    if (cluster) shareLoginThrottle(ctx.loginThrottle, cluster);
    for (const factory of moduleFactories) modules.push(await factory(ctx));
  } catch (err) {
    await services?.stop();
    await store.close();
    lock.release();
    throw err;
  }

  const api = createApiServer(limits, createApiHandler(ctx, modules), tlsPair, config.tlsProfile);
  api.on('upgrade', (req, socket: Duplex, head: Buffer) => {
    for (const module of modules) if (module.upgrade?.(req, socket, head)) return;
    socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
  });
  let edgeRouter: EdgeRouter = modules.find((m) => m.edge)?.edge ?? noRoutes;
  const edgeFronts = modules.flatMap((m) => (m.edgeFront ? [m.edgeFront.bind(m)] : []));
  const edgeRequest = (req: IncomingMessage, res: ServerResponse) => {
    for (const front of edgeFronts) if (front(req, res)) return;
    edgeRouter.request(req, res);
  };
  const edge = createServer(limits, edgeRequest);
  edge.on('upgrade', (req, socket: Duplex, head) => edgeRouter.upgrade(req, socket, head));
  const tlsProvider = modules.find((m) => m.edgeTls)?.edgeTls;
  const edgeTls =
    config.edgeTlsListen &&
    createEdgeTlsServer({
      limits,
      profile: config.tlsProfile,
      provider: () => tlsProvider,
      request: edgeRequest,
      upgrade: (req, socket, head) => edgeRouter.upgrade(req, socket, head),
    });
  // Every TLS listener staples OCSP responses for certificates that name a responder.
  const ocsp = new OcspStapler({ log, registry: ctx.metrics.registry, refreshMs: config.ocspRefreshMs });
  if (tlsPair) ocsp.attach(api as HttpsServer);
  if (edgeTls) ocsp.attach(edgeTls);
  const stopShedding: Array<() => void> = [];
  const shed = new Counter({
    name: 'monctl_http_slow_readers_shed_total',
    help: 'Clients disconnected for reading responses slower than --slow-reader-floor',
    registers: [ctx.metrics.registry],
  });
  const readerLimits = { floorBytesPerSec: config.server.slowReaderFloor, windowMs: config.server.slowReaderWindowMs };
  // HTTP/2 streams of the HTTPS edge are held to the same floor one by one: their socket's buffer says nothing of them.
  if (edgeTls) stopShedding.push(shedSlowH2Streams(edgeTls, readerLimits, () => shed.inc()));
  for (const server of [api, edge, ...(edgeTls ? [edgeTls as unknown as ApiServer] : [])]) {
    shedSlowHeaders(server, limits.headersTimeout);
    // Not on the HTTPS edge: patching its TLS sockets stalled 100 MB downloads through it (bench:tunnel's HTTPS row).
    if (server !== (edgeTls as unknown)) lingerOnClose(server);
    stopShedding.push(shedSlowReaders(server, readerLimits, () => shed.inc()));
    server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
      if (isLingering(socket)) return; // the rest of a refused request's body: read and dropped until it closes
      // A response already under way (a request timeout while its body still arrives) must not get a second one spliced in.
      const started = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true;
      if (socket.writable && err.code !== 'ECONNRESET' && !started) lingeringEnd(socket as Socket, rawProblemResponse(err));
      else socket.destroy();
    });
  }

  const apiAddress = await listen(api, config.listen.host, config.listen.port);
  const edgeAddress = await listen(edge, config.edgeListen.host, config.edgeListen.port);
  const edgeTlsAddress =
    edgeTls && config.edgeTlsListen ? await listen(edgeTls, config.edgeTlsListen.host, config.edgeTlsListen.port) : undefined;
  const tls = config.tls && tlsPair ? new TlsReloader(api as HttpsServer, config.tls, tlsPair, log, config.tlsProfile) : undefined;
  tls?.watch();
  // Port 0 asks the OS to choose: from here on the config holds the bound ports (pod name, TCP route checks).
  config.listen.port = apiAddress.port;
  config.edgeListen.port = edgeAddress.port;
  if (config.edgeTlsListen && edgeTlsAddress) config.edgeTlsListen.port = edgeTlsAddress.port;
  for (const module of modules) await module.start?.();
  const running: RunningDaemon = {
    ctx,
    apiUrl: urlOf(apiAddress, tls ? 'https' : 'http'),
    edgeUrl: urlOf(edgeAddress),
    ...(edgeTlsAddress ? { edgeTlsUrl: urlOf(edgeTlsAddress, 'https') } : {}),
    setEdgeRouter(router) {
      edgeRouter = router;
    },
    reload(trigger) {
      if (tls) tls.reload(trigger);
      else log.info({ trigger }, 'nothing to reload (the API listener has no --tls-cert)');
    },
    stop: () => {
      tls?.close();
      ocsp.close();
      stopShedding.forEach((stop) => stop());
      return stopDaemon(ctx, [api, edge, ...(edgeTls ? [edgeTls] : [])], modules, async () => {
        await services!.stop();
        await relay?.drain();
      }).finally(() => lock.release());
    },
  };
  log.info(
    {
      api: running.apiUrl,
      edge: running.edgeUrl,
      ...(running.edgeTlsUrl ? { edgeTls: running.edgeTlsUrl } : {}),
      dataDir: config.dataDir,
      database: store.location,
      ...(tlsPair ? { tls: describeCertificate(tlsPair.leaf) } : {}),
    },
    'listening',
  );
  return running;
}

/** Drain: stop accepting, end streams, let in-flight requests finish (10 s at most), then close the database. */
async function stopDaemon(ctx: DaemonContext, servers: Listener[], modules: DaemonModule[], beforeClose: () => unknown): Promise<void> {
  if (ctx.draining) return;
  ctx.draining = true;
  ctx.log.info('draining');
  ctx.streams.stop();
  endAllStreams();
  const drains = modules.map((m) =>
    Promise.resolve(m.drain?.()).catch((err) => ctx.log.error({ err, module: m.name }, 'module failed to drain')),
  );
  const closed = servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve())));
  for (const server of servers) server.closeIdleConnections();
  const timer = setTimeout(() => servers.forEach((s) => s.closeAllConnections()), 10_000);
  // A keep-alive connection whose request finishes during the drain would
  // otherwise hold the close for its whole keep-alive timeout.
  const sweeper = setInterval(() => servers.forEach((s) => s.closeIdleConnections()), 100);
  await Promise.all(closed);
  clearInterval(sweeper);
  await Promise.all(drains);
  clearTimeout(timer);
  for (const module of [...modules].reverse()) {
    try {
      await module.stop?.();
    } catch (err) {
      ctx.log.error({ err, module: module.name }, 'module failed to stop');
    }
  }
  await beforeClose(); // the shared services, and events still queued for the other pods
  await ctx.store.close();
  ctx.log.info('stopped');
}
