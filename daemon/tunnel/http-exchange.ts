import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { HttpError } from '../../src/errors.ts';
import { endToEndRawHeaders } from '../../src/tunnel/protocol.ts';
import { sendProblem } from '../http/problem.ts';
import { type EdgeDeps, type Framing, RELAY_TARGET_TIMEOUT_MS, type Routed, requestHead } from './edge-http.ts';
import { forwardHeaders, type HttpTarget, parseHttpTarget, targetFailure } from './forward.ts';
import type { Exchange } from './observe.ts';
import type { LiveMember } from './route-table.ts';
import { forwardPath, responseHeaders } from './rules.ts';
import type { ExchangeHandler, TargetConnection } from './target-connection.ts';

const unavailable = (message: string) => Object.assign(new Error(message), { code: 'ERR_TUNNEL_UNAVAILABLE' });

/**
 * One exchange between the edge's client and a target connection through the agent the pool chose.
 * Until a byte of the response came and while no byte of the request body went, a failure (the
 * agent lost, its target refusing) is retried once through another agent of the rotation
 * (docs/API.md#agent-pools): nothing the target may have acted on is sent twice.
 */
export class HttpExchange implements ExchangeHandler {
  readonly #deps: EdgeDeps;
  readonly #routing: Routed;
  readonly #req: IncomingMessage;
  readonly #res: ServerResponse;
  readonly #exchange: Exchange;
  readonly #clientIp: string | null;
  #conn: TargetConnection | undefined;
  #timer: NodeJS.Timeout | undefined;
  #framing: Framing = 'none';
  #answered = false;
  #paused = false;
  #retried = false;
  /** Whether the request's body listeners are set (on the first connection; they write to the current one). */
  #listening = false;
  /** Request body bytes written to a target: once one went, the request is never sent again. */
  #bodySent = 0;
  #requestEnded = false;
  /** A body piece held until the end of the received chunk: a whole small response goes out in one end(). */
  #held: Buffer | undefined;

  constructor(deps: EdgeDeps, routing: Routed, req: IncomingMessage, res: ServerResponse, exchange: Exchange, clientIp: string | null) {
    this.#deps = deps;
    this.#routing = routing;
    this.#req = req;
    this.#res = res;
    this.#exchange = exchange;
    this.#clientIp = clientIp;
  }

  /** Starts the exchange through `member` (the exchange was begun with its agent). */
  begin(member: LiveMember): void {
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
      this.#conn?.destroy();
    });
    this.#connect(member);
  }

  /** A connection to the member's target: local streams at once, through another pod asynchronously. */
  #connect(member: LiveMember): void {
    const { sessions, relay, remote } = this.#deps;
    const target = parseHttpTarget(member.target);
    if (!target) return this.#fail(502, 'target-unavailable', 'invalid target URL');
    const link = sessions.get(member.agentId);
    if (link) {
      let conn: TargetConnection;
      try {
        conn = sessions.pool(link, target.stream).acquire();
      } catch (err) {
        return this.error(unavailable(`tunnel: ${(err as Error).message}`));
      }
      return this.#send(conn, link.targetTimeoutMs, target);
    }
    const url = remote?.url(member.agentId);
    if (!relay || url === undefined) return this.error(unavailable('agent not connected'));
    this.#req.pause(); // no body byte may arrive before there is a connection to write it to
    relay.acquire(url, member.agentId, target.stream).then(
      (conn) => {
        if (this.#res.destroyed) return void conn.destroy(); // the client left meanwhile
        this.#send(conn, RELAY_TARGET_TIMEOUT_MS, target);
        if (this.#framing !== 'none') this.#req.resume();
      },
      (err: Error) => {
        remote!.invalidate();
        this.error(unavailable(`agent not reachable through its pod: ${err.message}`));
      },
    );
  }

  #send(conn: TargetConnection, timeoutMs: number, target: HttpTarget): void {
    const { route, forward, host } = this.#routing;
    const req = this.#req;
    const first = !this.#listening;
    this.#listening = true;
    this.#conn = conn;
    const [head, framing] = requestHead(req, target.base + forwardPath(route, forward), forwardHeaders(req, route, target, host));
    this.#framing = framing;
    // The agent's --target-timeout: how long the target may stay silent before its response headers
    // (re-armed while the client uploads, as a socket idle timeout would be); the body may take longer.
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => conn.destroy(Object.assign(new Error('target timed out'), { code: 'ETIMEDOUT' })), timeoutMs);
    if (framing === 'none' || this.#requestEnded) {
      conn.send(req.method!, head, this, framing === 'none');
      if (framing === 'chunked') conn.write('0\r\n\r\n');
      if (framing !== 'none') conn.endRequest();
      if (first) req.resume();
      return;
    }
    conn.send(req.method!, head, this, false);
    if (!first) return; // the body listeners are there already, writing to the current connection
    req.on('data', (chunk: Buffer) => {
      const out = this.#conn!;
      this.#exchange.bytesIn += chunk.length;
      this.#bodySent += chunk.length;
      if (!this.#answered) this.#timer?.refresh();
      if (this.#framing === 'chunked') out.write(`${chunk.length.toString(16)}\r\n`);
      const more = out.write(chunk);
      if (this.#framing === 'chunked' ? !out.write('\r\n') : !more) req.pause();
    });
    req.on('end', () => {
      this.#requestEnded = true;
      if (this.#framing === 'chunked') this.#conn!.write('0\r\n\r\n');
      this.#conn!.endRequest();
    });
  }

  drain(): void {
    this.#req.resume();
  }

  head(status: number, headers: string[]): void {
    this.#answered = true;
    clearTimeout(this.#timer);
    try {
      this.#res.writeHead(status, responseHeaders(this.#routing.route, endToEndRawHeaders(headers)));
    } catch (err) {
      this.#fail(502, 'bad-target-response', `invalid response from target: ${(err as Error).message}`);
      this.#conn?.destroy();
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
    if (this.#retry(err)) return;
    const failure = targetFailure(err);
    this.#fail(failure.status, failure.code, failure.detail);
  }

  /** Once, when nothing of the request's body went and nothing of the response came: another agent of the rotation. */
  #retry(err: NodeJS.ErrnoException): boolean {
    if (this.#retried || this.#bodySent > 0 || err.code === 'ETIMEDOUT' || this.#res.destroyed) return false;
    const { balancer } = this.#deps;
    const next = balancer.pick(this.#routing.route, this.#clientIp, this.#exchange.agentId);
    if (!next) return false;
    this.#retried = true;
    this.#exchange.moveTo(next.agentId);
    this.#connect(next);
    return true;
  }

  #write(piece: Buffer): void {
    const res = this.#res;
    if (res.destroyed || res.write(piece) || this.#paused) return;
    // The client's socket is full: the stream is not read (its window fills, the agent stops) until it drains.
    this.#paused = true;
    this.#conn!.pause();
    res.once('drain', () => {
      this.#paused = false;
      this.#conn?.resume();
    });
  }

  #fail(status: number, code: string, detail: string): void {
    const res = this.#res;
    this.#req.resume();
    this.#exchange.finish(res.headersSent ? res.statusCode : status, detail);
    if (res.destroyed || res.writableEnded) return;
    if (res.headersSent) return void res.destroy(); // mid-response: the client must see a truncated response
    sendProblem(this.#req, res, new HttpError(status, code, detail));
  }
}
