import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { HttpError } from '../../../src/errors.ts';
import { sendProblem } from '../../http/problem.ts';
import { rawProblem } from '../raw-response.ts';

/**
 * No agent of the route's pool is in the rotation (docs/API.md#agent-pools): 503 `no-healthy-agent`
 * with Retry-After. Agents reconnect within seconds (the agent's backoff starts at 1 s) and health
 * checks run every 10 s by default: a client retrying after 5 s usually finds one back.
 */
export const RETRY_AFTER_S = 5;
const DETAIL = 'No agent of this route is connected and healthy right now';
const CODE = 'no-healthy-agent';

const noAgent = () => new HttpError(503, CODE, DETAIL, { headers: { 'Retry-After': String(RETRY_AFTER_S) } });

/** A short page for people: a browser gets it instead of problem+json. */
const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>503 Service unavailable</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36em;margin:15vh auto;padding:0 1em;color:#222}</style>
</head><body><h1>Service unavailable</h1>
<p>This site is reached through tunnel agents, and none of them is connected and healthy right now.</p>
<p>Please try again in a few seconds.</p></body></html>
`;

/** Whether the client asks for HTML (a browser) before problem+json. */
function wantsHtml(req: IncomingMessage): boolean {
  const accept = req.headers.accept;
  return typeof accept === 'string' && accept.includes('text/html');
}

/** The 503 for an edge request. */
export function sendNoAgent(req: IncomingMessage, res: ServerResponse): void {
  req.resume();
  if (!wantsHtml(req) || res.headersSent) return sendProblem(req, res, noAgent());
  res.writeHead(503, {
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Length': Buffer.byteLength(PAGE),
    'Cache-Control': 'no-store',
    'Retry-After': String(RETRY_AFTER_S),
  });
  res.end(req.method === 'HEAD' ? undefined : PAGE);
}

/** The 503 for an upgrade (WebSocket), written to the socket. */
export function rawNoAgent(socket: Duplex, instance: string): void {
  rawProblem(socket, noAgent(), instance);
}

export const NO_AGENT = { status: 503, detail: DETAIL } as const;
