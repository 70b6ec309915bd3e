import type { IncomingMessage, ServerResponse } from 'node:http';
import { Counter, type Registry } from 'prom-client';
import { HttpError } from '../../src/errors.ts';
import { PING_KINDS } from '../../src/api/schemas/push.ts';
import type { DaemonContext } from '../context.ts';
import { sendProblem, toHttpError } from '../http/problem.ts';
import { edgeClientIp } from '../http/client-ip.ts';
import { NO_BODY, readPingBody } from './ping-body.ts';
import { isPingPath, parsePing, PING_METHODS, pathOf, pingMethodNotAllowed } from './ping-path.ts';
import { type PingWriter, tooMany } from './ping-writer.ts';
import type { RateLimiter } from './rate-limit.ts';

export interface PingRouteDeps {
  ctx: Pick<DaemonContext, 'clock' | 'log'>;
  writer: PingWriter;
  perAddress: RateLimiter;
  metrics: PingMetrics;
}

export interface PingMetrics {
  pings: Counter<'kind'>;
  refused: Counter<'status'>;
}

export function pingMetrics(registry: Registry): PingMetrics {
  const pings = new Counter({
    name: 'monctl_push_pings_total',
    help: 'Push pings recorded, by kind (success, start, fail, log)',
    labelNames: ['kind'],
    registers: [registry],
  });
  for (const kind of PING_KINDS) pings.inc({ kind }, 0);
  const refused = new Counter({
    name: 'monctl_push_pings_refused_total',
    help: 'Push pings refused, by HTTP status (400 malformed, 404 unknown, 413 too large, 429 rate-limited, 503 busy)',
    labelNames: ['status'],
    registers: [registry],
  });
  return { pings, refused };
}

const OK = Buffer.from('OK\n');

/**
 * Serves a ping URL on either listener (the API's middleware, the edge's front): returns false
 * for any other path. Refusals come cheapest first: the method and the path, then the client's
 * rate (before its body is read), then the check's (in the writer, once the check is known).
 */
export function pingRoute(deps: PingRouteDeps): (req: IncomingMessage, res: ServerResponse) => boolean {
  const refuse = (req: IncomingMessage, res: ServerResponse, err: unknown) => {
    // The client went away mid-body: nobody to answer, and nothing wrong with the daemon.
    if (req.destroyed && !(err instanceof HttpError)) return;
    const error = toHttpError(err, deps.ctx.log);
    deps.metrics.refused.inc({ status: String(error.status) });
    // A body refused half-read: end the connection rather than read the rest (HTTP/2 resets the stream by itself).
    if (error.status === 413 && req.httpVersionMajor === 1) res.setHeader('Connection', 'close');
    sendProblem(req, res, error, deps.ctx.log);
  };

  const serve = async (req: IncomingMessage, res: ServerResponse, path: string, query: string) => {
    if (!PING_METHODS.includes(req.method ?? '')) throw pingMethodNotAllowed(req.method);
    const parsed = parsePing(path, query);
    const sourceIp = edgeClientIp(req) ?? '';
    const wait = deps.perAddress.take(sourceIp, performance.now());
    if (wait > 0) throw tooMany(wait, 'this client address');
    const at = deps.ctx.clock.now();
    let body = NO_BODY;
    if (req.method === 'POST') body = await readPingBody(req);
    else req.resume();
    const ua = req.headers['user-agent'];
    const outcome = await deps.writer.submit({ parsed, at, sourceIp, userAgent: ua === undefined ? null : ua, body });
    if ('error' in outcome) throw outcome.error;
    deps.metrics.pings.inc({ kind: outcome.kind });
    res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': OK.length, 'Cache-Control': 'no-store' });
    res.end(req.method === 'HEAD' ? undefined : OK);
  };

  return (req, res) => {
    const { path, query } = pathOf(req.url ?? '/');
    if (!isPingPath(path)) return false;
    serve(req, res, path, query).catch((err: unknown) => refuse(req, res, err));
    return true;
  };
}
