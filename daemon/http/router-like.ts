import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * The slice of @tinyhttp/app the daemon uses: method routes and middleware.
 * Described here so capabilities depend on this, not on the framework.
 */
export type RouteHandler = (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => unknown;

export interface RouterLike {
  get(path: string, handler: RouteHandler): unknown;
  post(path: string, handler: RouteHandler): unknown;
  put(path: string, handler: RouteHandler): unknown;
  patch(path: string, handler: RouteHandler): unknown;
  delete(path: string, handler: RouteHandler): unknown;
  options(path: string, handler: RouteHandler): unknown;
  use(handler: RouteHandler): unknown;
}
