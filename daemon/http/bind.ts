import type { IncomingMessage, ServerResponse } from 'node:http';
import type { BodyOf, OperationDef, ParamsOf, QueryOf, ResponseOf } from '../../src/api/operation.ts';
import { type OperationId, operationList, type Operations } from '../../src/api/operations.ts';
import { forbidden, HttpError, unauthorized } from '../../src/errors.ts';
import { type Principal, resolvePrincipal } from '../auth/principal.ts';
import { tokensEqual } from '../auth/sessions.ts';
import type { DaemonContext } from '../context.ts';
import { bodyAbsent, readJson } from './body.ts';
import { parseQueryStrict } from './well-formed.ts';
import { sendJson, sendJsonText } from './problem.ts';
import { RawJson } from './raw-json.ts';
import type { RouterLike } from './router-like.ts';
import { checker, validateBody, validateStrings } from './validate.ts';

export interface RequestContext<O extends OperationDef> {
  params: ParamsOf<O>;
  query: QueryOf<O>;
  body: BodyOf<O>;
  principal: Principal;
  req: IncomingMessage;
  res: ServerResponse;
  ctx: DaemonContext;
}

/**
 * A handler returns the response body (or its cached JSON text as RawJson);
 * streams write `res` themselves and return nothing.
 */
export type Handler<O extends OperationDef> = (rc: RequestContext<O>) => Promise<ResponseOf<O> | RawJson> | ResponseOf<O> | RawJson;
export type Handlers = { [K in OperationId]?: Handler<Operations[K]> };

/** Handlers for one table of operations, typed by that table (before it joins src/api/operations.ts). */
export type HandlersOf<T extends Record<string, OperationDef>> = { [K in keyof T]: Handler<T[K]> };

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Access rules (docs/API.md#roles-and-access), with CSRF for unsafe session calls. */
export function authorize(op: OperationDef, principal: Principal, req: IncomingMessage): void {
  if (principal.kind === 'user' && principal.via === 'session' && UNSAFE.has(op.method)) {
    const sent = req.headers['x-csrf-token'];
    if (!tokensEqual(Array.isArray(sent) ? sent[0] : sent, principal.csrfToken ?? undefined)) {
      throw new HttpError(403, 'csrf', 'Missing or invalid CSRF token: send the token from the login page in X-CSRF-TOKEN');
    }
  }
  if (op.access === 'public') return;
  if (principal.kind === 'anonymous') throw unauthorized();
  if (op.access === 'admin' && principal.role !== 'ADMIN') throw forbidden('This operation needs the ADMIN role');
}

function queryOf(req: IncomingMessage): Record<string, string> {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  return q < 0 ? {} : Object.fromEntries(parseQueryStrict(url.slice(q + 1)));
}

/** Express-style route path for tinyhttp: `/api/resources/{id}` to `/api/resources/:id`. */
export function routePath(template: string): string {
  return template.replace(/\{(\w+)\}/g, ':$1');
}

/**
 * Binds every operation of src/api to its handler. An operation without a
 * handler stops the daemon at start: the API description never promises
 * what the server does not do.
 */
export function bindOperations(router: RouterLike, ctx: DaemonContext, handlers: Handlers): void {
  const missing = operationList.filter((op) => !(op.id in handlers)).map((op) => op.id);
  if (missing.length) throw new Error(`operations without a handler: ${missing.join(', ')}`);

  for (const op of operationList) {
    const handler = handlers[op.id as OperationId] as Handler<OperationDef>;
    const method = op.method.toLowerCase() as Lowercase<OperationDef['method']>;
    router[method](routePath(op.path), async (req, res) => {
      const generation = ctx.streams.generation;
      const principal = await resolvePrincipal(req, ctx.keys, ctx.sessions);
      authorize(op, principal, req);
      const params = op.params ? validateStrings(op.params, (req as { params?: Record<string, string> }).params ?? {}, 'path') : undefined;
      const query = op.query ? validateStrings(op.query, queryOf(req), 'query') : undefined;
      const body = op.body
        ? validateBody(op.body, op.bodyOptional && bodyAbsent(req) ? (req.resume(), {}) : await readJson(req, op.bodyLimit))
        : undefined;
      const result = await handler({ params, query, body, principal, req, res, ctx } as RequestContext<OperationDef>);
      // A stream is open once its handler returns: from here it lasts only as long as its credential.
      if (op.stream) return ctx.streams.watch(res, principal, generation);
      if (res.headersSent) return;
      const value = result instanceof RawJson ? (ctx.config.checkResponses ? JSON.parse(result.text) : undefined) : result;
      if (ctx.config.checkResponses && op.response && !checker(op.response).Check(value)) {
        const first = [...checker(op.response).Errors(value)].slice(0, 3).map((e) => `${e.path} ${e.message}`);
        ctx.log.error({ operation: op.id, errors: first }, 'response does not match its schema');
        throw new Error(`response of ${op.id} does not match its schema: ${first.join('; ')}`);
      }
      if (result instanceof RawJson) sendJsonText(res, op.status ?? 200, result.text);
      else sendJson(res, op.status ?? 200, result);
    });
  }
}

/** For 405: the methods some operation allows on this path, if any. */
export function allowedMethods(pathname: string): string[] {
  const methods = new Set<string>();
  for (const op of operationList) {
    const pattern = new RegExp(`^${op.path.replace(/\{\w+\}/g, '[^/]+')}/?$`);
    if (pattern.test(pathname)) methods.add(op.method);
  }
  return [...methods];
}
