import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { HttpError } from '../../src/errors.ts';
import { endToEndRawHeaders } from '../../src/tunnel/protocol.ts';
import type { PodRelay } from './tunnel-relay.ts';
import type { DaemonContext } from '../context.ts';
import { sendProblem } from '../http/problem.ts';
import { routeRequest, type Routing } from './edge-route.ts';
import { exchangeInfo, forwardHeaders, parseHttpTarget, targetFailure } from './forward.ts';
import type { EdgeGate } from './access/gate.ts';
import type { Exchange, Observer } from './observe.ts';
import type { LiveRoute, RouteTable } from './route-table.ts';
import { forwardPath, responseHeaders } from './rules.ts';
import type { AgentSessions } from './sessions.ts';
import type { ExchangeHandler, TargetConnection } from './target-connection.ts';

export interface EdgeDeps {
  ctx: DaemonContext;
  table: RouteTable;
  sessions: AgentSessions;
  observer: Observer;
  gate: EdgeGate;
  /** Pods: reaches agents whose session is on another pod. */
  relay?: PodRelay;
}

/** The target timeout of a relayed exchange (the agent's own is known to the pod holding its session). */
export const RELAY_TARGET_TIMEOUT_MS = 30_000;

/** Methods node:http's client sent without a body unless one was given (the others get an empty chunked body). */
const BODYLESS = new Set(['GET', 'HEAD', 'DELETE', 'OPTIONS', 'TRACE', 'CONNECT']);

/**
 * One edge request through the tunnel: the daemon is the HTTP client of the
 * target, over a pooled keep-alive stream through the agent
 * (target-connection.ts). Bodies stream both ways with backpressure; nothing
 * is buffered whole.
 */
export function forwardHttp(deps: EdgeDeps, req: IncomingMessage, res: ServerResponse): Promise<void> | undefined {
  const routing = routeRequest(deps.table, req, deps.gate);
  if (routing instanceof Promise) return routing.then((r) => forwardRouted(deps, req, res, r));
  return forwardRouted(deps, req, res, routing) ?? undefined;
}

function forwardRouted(deps: EdgeDeps, req: IncomingMessage, res: ServerResponse, routing: Routing): Promise<void> | void {
  if ('error' in routing) {
    // A refusal on a known route is in its access log, as other answers of the edge are.
    if (routing.route)
      deps.observer.begin(routing.route, exchangeInfo(req, routing.logPath)).finish(routing.error.status, routing.error.message);
    return sendProblem(req, res, routing.error);
  }
  const { route } = routing;
  const exchange = deps.observer.begin(route, exchangeInfo(req, routing.logPath));
  const link = deps.sessions.get(route.agentId);
  const target = parseHttpTarget(route.target);
  if (!link && target && deps.relay) return relayed(deps, req, res, routing, exchange, target);
  let conn: TargetConnection | undefined;
  let error: string | undefined;
  if (!link) error = 'agent not connected';
  else if (!target) error = 'invalid target URL';
  else {
    try {
      conn = deps.sessions.pool(link, target.stream).acquire();
    } catch (err) {
      error = `tunnel: ${(err as Error).message}`;
    }
  }
  if (!conn || !link || !target) {
    req.resume();
    const code = link && !target ? 'target-unavailable' : 'agent-unavailable';
    exchange.finish(502, error);
    return sendProblem(req, res, new HttpError(502, code, error!));
  }
  new HttpExchange(route, req, res, exchange, conn, link.targetTimeoutMs).start(
    requestHead(req, target.base + forwardPath(route, routing.forward), forwardHeaders(req, route, target, routing.host)),
  );
}

/** The agent's session is not here: through the pod that holds it (tunnel/tunnel-relay.ts), else 502. */
async function relayed(
  deps: EdgeDeps,
  req: IncomingMessage,
  res: ServerResponse,
  routing: Exclude<Routing, { error: HttpError }>,
  exchange: Exchange,
  target: NonNullable<ReturnType<typeof parseHttpTarget>>,
): Promise<void> {
  const { route } = routing;
  let conn: TargetConnection | undefined;
  let error = 'agent not connected';
  try {
    const holder = await deps.relay!.holder(route.agentId);
    if (holder) conn = await deps.relay!.acquire(holder, route.agentId, target.stream);
  } catch (err) {
    error = `agent not reachable through its pod: ${(err as Error).message}`;
  }
  if (!conn) {
    req.resume();
    exchange.finish(502, error);
    return sendProblem(req, res, new HttpError(502, 'agent-unavailable', error));
  }
  if (res.destroyed) {
    // The client left while the relay was set up.
    conn.destroy();
    return exchange.finish(null, 'client disconnected');
  }
  new HttpExchange(route, req, res, exchange, conn, RELAY_TARGET_TIMEOUT_MS).start(
    requestHead(req, target.base + forwardPath(route, routing.forward), forwardHeaders(req, route, target, routing.host)),
  );
}

/** How the request body goes to the target: none, as received (Content-Length), or chunked. */
type Framing = 'none' | 'raw' | 'chunked';

/** The request head the target gets, and how its body follows. */
function requestHead(req: IncomingMessage, path: string, headers: OutgoingHttpHeaders): [string, Framing] {
  const chunked = req.headers['transfer-encoding'] !== undefined;
  if (chunked) delete headers['content-length'];
  const framing: Framing = chunked
    ? 'chunked'
    : headers['content-length'] !== undefined
      ? 'raw'
      : BODYLESS.has(req.method!)
        ? 'none'
        : 'chunked';
  let head = `${req.method} ${path} HTTP/1.1\r\n`;
  for (const name in headers) {
    const value = headers[name];
    if (Array.isArray(value)) for (const v of value) head += `${name}: ${v}\r\n`;
    else if (value !== undefined) head += `${name}: ${value}\r\n`;
  }
  head += framing === 'chunked' ? 'Connection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n' : 'Connection: keep-alive\r\n\r\n';
  return [head, framing];
}

/** One exchange between the edge's client and a target connection. */
class HttpExchange implements ExchangeHandler {
  readonly #route: LiveRoute;
  readonly #req: IncomingMessage;
  readonly #res: ServerResponse;
  readonly #exchange: Exchange;
  readonly #conn: TargetConnection;
  readonly #timer: NodeJS.Timeout;
  #answered = false;
  #paused = false;
  /** A body piece held until the end of the received chunk: a whole small response goes out in one end(). */
  #held: Buffer | undefined;

  constructor(route: LiveRoute, req: IncomingMessage, res: ServerResponse, exchange: Exchange, conn: TargetConnection, timeoutMs: number) {
    this.#route = route;
    this.#req = req;
    this.#res = res;
    this.#exchange = exchange;
    this.#conn = conn;
    // The agent's --target-timeout: how long the target may stay silent before its response headers
    // (re-armed while the client uploads, as a socket idle timeout would be); the body may take longer.
    this.#timer = setTimeout(() => conn.destroy(Object.assign(new Error('target timed out'), { code: 'ETIMEDOUT' })), timeoutMs);
  }

  start([head, framing]: [string, Framing]): void {
    const req = this.#req;
    const res = this.#res;
    // node:http2's compatibility response emits 'finish' whenever its stream closes, reset included:
    // only a stream whose write side finished completed its answer (else 'close' below says why not).
    const h2 = (res as unknown as { stream?: Duplex }).stream;
    res.on('finish', () => {
      if (!h2 || h2.writableFinished) this.#exchange.finish(res.statusCode);
    });
    res.on('close', () => {
      if (res.writableFinished) return;
      clearTimeout(this.#timer);
      this.#exchange.finish(res.headersSent ? res.statusCode : null, 'client disconnected');
      this.#conn.destroy();
    });
    if (framing === 'none') {
      this.#conn.send(req.method!, head, this, true);
      req.resume();
      return;
    }
    this.#conn.send(req.method!, head, this, false);
    req.on('data', (chunk: Buffer) => {
      this.#exchange.bytesIn += chunk.length;
      if (!this.#answered) this.#timer.refresh();
      if (framing === 'chunked') this.#conn.write(`${chunk.length.toString(16)}\r\n`);
      const more = this.#conn.write(chunk);
      if (framing === 'chunked' ? !this.#conn.write('\r\n') : !more) req.pause();
    });
    req.on('end', () => {
      if (framing === 'chunked') this.#conn.write('0\r\n\r\n');
      this.#conn.endRequest();
    });
  }

  drain(): void {
    this.#req.resume();
  }

  head(status: number, headers: string[]): void {
    this.#answered = true;
    clearTimeout(this.#timer);
    try {
      this.#res.writeHead(status, responseHeaders(this.#route, endToEndRawHeaders(headers)));
    } catch (err) {
      this.#fail(502, 'bad-target-response', `invalid response from target: ${(err as Error).message}`);
      this.#conn.destroy();
    }
  }

  body(piece: Buffer): void {
    this.#exchange.bytesOut += piece.length;
    if (this.#held) this.#write(this.#held);
    this.#held = piece;
  }

  flush(): void {
    const held = this.#held;
    this.#held = undefined;
    if (held) this.#write(held);
  }

  end(): void {
    const held = this.#held;
    this.#held = undefined;
    if (!this.#res.destroyed) this.#res.end(held);
  }

  error(err: NodeJS.ErrnoException): void {
    clearTimeout(this.#timer);
    this.#held = undefined;
    if (this.#answered) return this.#fail(502, 'agent-unavailable', 'the tunnel stream broke mid-response');
    const failure = targetFailure(err);
    this.#fail(failure.status, failure.code, failure.detail);
  }

  #write(piece: Buffer): void {
    const res = this.#res;
    if (res.destroyed || res.write(piece) || this.#paused) return;
    // The client's socket is full: the stream is not read (its window fills, the agent stops) until it drains.
    this.#paused = true;
    this.#conn.pause();
    res.once('drain', () => {
      this.#paused = false;
      this.#conn.resume();
    });
  }

  #fail(status: number, code: string, detail: string): void {
    const res = this.#res;
    this.#exchange.finish(res.headersSent ? res.statusCode : status, detail);
    if (res.destroyed || res.writableEnded) return;
    if (res.headersSent) return void res.destroy(); // mid-response: the client must see a truncated response
    sendProblem(this.#req, res, new HttpError(status, code, detail));
  }
}
