import type { IncomingMessage, ServerResponse } from 'node:http';
import { App } from '@tinyhttp/app';
import { HttpError } from '../../src/errors.ts';
import type { DaemonContext } from '../context.ts';
import type { DaemonModule } from '../module.ts';
import { allowedMethods, bindOperations, type Handlers } from './bind.ts';
import { sendProblem } from './problem.ts';
import type { RouteHandler, RouterLike } from './router-like.ts';

/** The route template a request matched, for the metrics label. */
const routeOf = new WeakMap<IncomingMessage, string>();
export function markRoute(req: IncomingMessage, template: string): void {
  routeOf.set(req, template);
}

/**
 * The API listener's request handler: module middleware, module routes, every
 * operation of the table, 404/405 as problem+json, and one error boundary.
 */
export function createApiHandler(ctx: DaemonContext, modules: DaemonModule[]) {
  const app = new App({
    settings: { xPoweredBy: false },
    // tinyhttp's default extensions (res.json, req.query, …) are unused here;
    // skipping them saves work on every request. It does call sendStatus on a
    // malformed URL, so that one is kept.
    applyExtensions: (_req, res, next) => {
      (res as unknown as { sendStatus: (s: number) => void }).sendStatus = () => sendProblem(_req, res, new URIError('malformed'), ctx.log);
      next?.();
    },
    noMatchHandler: (req, res) => {
      const pathname = (req.url ?? '/').split('?')[0];
      const allow = [...new Set([...allowedMethods(pathname), ...rawRoutes.filter((r) => r.pattern.test(pathname)).map((r) => r.method)])];
      // A route that exists for this method but passed (next()) is a 404, not a 405.
      const method = req.method === 'HEAD' ? 'GET' : (req.method ?? 'GET');
      if (allow.length && method !== 'OPTIONS' && !allow.includes(method)) {
        sendProblem(
          req,
          res,
          new HttpError(405, 'method-not-allowed', `${req.method} is not allowed on ${pathname}`, {
            headers: { Allow: allow.join(', ') },
          }),
        );
        return;
      }
      sendProblem(req, res, new HttpError(404, 'not-found', `No route for ${req.method} ${pathname}`));
    },
    onError: (err, req, res) => sendProblem(req, res, err, ctx.log),
  });

  /** Routes outside the operation table (login, metrics, explorer, …), so that they get 405 too. */
  const rawRoutes: RawRoute[] = [];

  // Time every request; the label is the matched template, never the raw path.
  app.use((req, res, next) => {
    const start = process.hrtime.bigint();
    res.once('finish', () => {
      const seconds = Number(process.hrtime.bigint() - start) / 1e9;
      ctx.metrics.httpDuration.observe(
        { method: req.method ?? 'GET', route: routeOf.get(req) ?? 'unmatched', status: String(res.statusCode) },
        seconds,
      );
    });
    next();
  });

  const router = app as unknown as RouterLike;
  const timed = wrapRoutes(router, rawRoutes);
  for (const module of modules) for (const mw of module.middleware ?? []) timed.use(mw);
  for (const module of modules) module.routes?.(timed);
  const handlers: Handlers = Object.assign({}, ...modules.map((m) => m.handlers ?? {}));
  bindOperations(timed, ctx, handlers);

  return (req: IncomingMessage, res: ServerResponse) => {
    try {
      app.handler(req as never, res as never);
    } catch (err) {
      sendProblem(req, res, err, ctx.log);
    }
  };
}

/**
 * A router whose routes record their template for the metrics label. Every
 * handler is wrapped in an `async` function because tinyhttp routes rejections
 * to onError only for functions tagged AsyncFunction.
 */
interface RawRoute {
  method: string;
  pattern: RegExp;
}

function wrapRoutes(router: RouterLike, seen: RawRoute[]): RouterLike {
  const wrap = (method: 'get' | 'post' | 'put' | 'patch' | 'delete' | 'options') => (path: string, handler: RouteHandler) => {
    const escaped = path.replace(/[.+*?^$()[\]{}|\\]/g, '\\$&').replace(/:\w+/g, '[^/]+');
    seen.push({ method: method.toUpperCase(), pattern: new RegExp(`^${escaped}/?$`) });
    return router[method](path, async (req, res, next) => {
      markRoute(req, path.replace(/:(\w+)/g, '{$1}'));
      await handler(req, res, next);
    });
  };
  return {
    get: wrap('get'),
    post: wrap('post'),
    put: wrap('put'),
    patch: wrap('patch'),
    delete: wrap('delete'),
    options: wrap('options'),
    use: (h) =>
      router.use(async (req, res, next) => {
        await h(req, res, next);
      }),
  };
}
