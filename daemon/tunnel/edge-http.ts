import type { IncomingMessage, ServerResponse } from 'node:http';
import { HttpError } from '../../src/errors.ts';
import { endToEndHeaders, relay } from '../../src/tunnel/protocol.ts';
import type { DaemonContext } from '../context.ts';
import { sendProblem } from '../http/problem.ts';
import { agentError, cancel, exchangeInfo, openStream, tunnelHeaders } from './forward.ts';
import type { Observer } from './observe.ts';
import type { LiveRoute, RouteTable } from './route-table.ts';
import type { AgentSessions } from './sessions.ts';

export interface EdgeDeps {
  ctx: DaemonContext;
  table: RouteTable;
  sessions: AgentSessions;
  observer: Observer;
}

/** Finds the route; a miss while routes reload waits for the reload (a just-created route is served). */
export async function findRoute(deps: EdgeDeps, req: IncomingMessage): Promise<LiveRoute | undefined> {
  const path = (req.url ?? '/').split('?')[0];
  const found = deps.table.match(req.headers.host, path);
  if (found || !deps.table.loading) return found;
  await deps.table.loading;
  return deps.table.match(req.headers.host, path);
}

const noRoute = (req: IncomingMessage) =>
  new HttpError(404, 'no-route', `No route for host ${req.headers.host ?? '(none)'} and path ${(req.url ?? '/').split('?')[0]}`);

/**
 * One edge request through the tunnel: request body piped into an h2 stream to
 * the agent, the response piped back; both directions stream with h2 flow
 * control and Node backpressure, nothing is buffered whole.
 */
export async function forwardHttp(deps: EdgeDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const route = await findRoute(deps, req);
  if (!route) return sendProblem(req, res, noRoute(req));
  const exchange = deps.observer.begin(route, exchangeInfo(req));
  const fail = (status: number, code: string, detail: string) => {
    exchange.finish(res.headersSent ? res.statusCode : status, detail);
    sendProblem(req, res, new HttpError(status, code, detail));
  };

  const hasBody = req.headers['content-length'] !== undefined ? req.headers['content-length'] !== '0'
    : req.headers['transfer-encoding'] !== undefined;
  const { stream, error } = openStream(deps.sessions, route.agentId, tunnelHeaders(req, route, 'http'), !hasBody);
  if (!stream) {
    req.resume();
    return fail(502, 'agent-unavailable', error ?? 'agent not connected');
  }

  req.on('data', (chunk: Buffer) => { exchange.bytesIn += chunk.length; });
  if (hasBody) req.pipe(stream);
  else req.resume();

  let answered = false;
  let piping = false;
  stream.on('response', (headers) => {
    answered = true;
    const status = Number(headers[':status']);
    const failed = agentError(headers);
    if (failed) {
      stream.resume();
      return fail(status, status === 504 ? 'target-timeout' : 'target-unavailable', failed);
    }
    try {
      res.writeHead(status, endToEndHeaders(headers));
    } catch (err) {
      cancel(stream);
      return fail(502, 'bad-target-response', `invalid response from target: ${(err as Error).message}`);
    }
    stream.on('data', (chunk: Buffer) => { exchange.bytesOut += chunk.length; });
    piping = true;
    // A reset ends the readable side too: record why before relay() destroys the response.
    stream.once('end', () => { if (stream.rstCode) exchange.finish(res.statusCode, 'tunnel stream reset'); });
    relay(stream, res);
  });
  const broken = (why: string) => {
    if (!answered) {
      answered = true;
      return fail(502, 'agent-unavailable', why);
    }
    // Mid-response: the client must see a truncated response, not a clean end.
    if (piping && (stream.rstCode || !stream.readableEnded) && !res.writableFinished) {
      exchange.finish(res.statusCode, why);
      res.destroy();
    }
  };
  stream.on('error', (err) => broken(`tunnel stream failed: ${(err as NodeJS.ErrnoException).code ?? err.message}`));
  // The agent went away without an error on this stream (session destroyed, RST_STREAM).
  stream.on('close', () => broken('the agent closed the stream'));
  res.on('finish', () => exchange.finish(res.statusCode));
  res.on('close', () => {
    if (res.writableFinished) return;
    exchange.finish(res.headersSent ? res.statusCode : null, 'client disconnected');
    cancel(stream);
  });
}
