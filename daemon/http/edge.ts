import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { HttpError } from '../../src/errors.ts';
import { sendProblem } from './problem.ts';

/**
 * The public entry for HTTP routes (`--edge-listen`). The tunnel capability
 * installs its router here; until a route matches, the edge answers 404
 * problem+json, and upgrades that match nothing are refused.
 */
export interface EdgeRouter {
  request(req: IncomingMessage, res: ServerResponse): void;
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
}

export const noRoutes: EdgeRouter = {
  request(req, res) {
    sendProblem(req, res, new HttpError(404, 'no-route', `No route for host ${req.headers.host ?? '(none)'}`));
  },
  upgrade(_req, socket) {
    socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
  },
};
