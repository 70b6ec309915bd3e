import type { IncomingMessage, ServerResponse } from 'node:http';
import type { monitoringAdminOperations } from '../../src/api/ops/monitoring-admin.ts';
import { invalidField, notFound } from '../../src/errors.ts';
import type { DaemonContext } from '../context.ts';
import type { RouteHandler } from '../http/router-like.ts';
import type { HandlersOf } from '../http/bind.ts';
import { checkHostPort } from './targets.ts';

/**
 * The CORS allow-list of `/api/` (docs/API.md#cors): kept in memory, reloaded after every change (effective on the
 * next request) and every 10 s (changes made through another pod).
 */
const ALLOW_METHODS = 'GET, POST, PUT, PATCH, DELETE';
const ALLOW_HEADERS = 'Authorization, Content-Type, X-CSRF-TOKEN, X-API-KEY, Last-Event-ID';
const REFRESH_MS = 10_000;

const DEFAULT_PORTS: Record<string, string> = { http: '80', https: '443' };

/**
 * An origin in its canonical form (scheme and host in lower case, the port
 * without leading zeros and dropped when it is the scheme's default, as
 * browsers send it), or throws a 400 naming `origin` with the reason.
 */
export function normaliseOrigin(input: string): string {
  const bad = (reason: string) => invalidField('origin', reason);
  const text = input.trim();
  if (text.includes('*')) throw bad('wildcards are not allowed: list each origin');
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/(.*)$/.exec(text);
  if (!scheme) throw bad('must start with a scheme: https://host[:port]');
  const [, rawScheme, rest] = scheme;
  if (rest === '') throw bad('must name a host after the scheme');
  if (/[?#]/.test(rest)) throw bad('must not have a query or fragment');
  if (rest.endsWith('/') && rest.indexOf('/') === rest.length - 1) {
    // The seed lists a trailing slash as invalid; say what to send instead.
    const without = lenient(text.slice(0, -1));
    throw bad(`must not end with a slash${without ? `: use ${without}` : ''}`);
  }
  if (rest.includes('/')) throw bad('must not include a path');
  if (rest.includes('@')) throw bad('must not include user information');
  const reason = checkHostPort(rest, false);
  if (reason) throw bad(reason);
  const lowerScheme = rawScheme.toLowerCase();
  const portMatch = /:(\d+)$/.exec(rest);
  const host = (portMatch ? rest.slice(0, portMatch.index) : rest).toLowerCase();
  const port = portMatch ? String(Number(portMatch[1])) : undefined;
  return port === undefined || port === DEFAULT_PORTS[lowerScheme] ? `${lowerScheme}://${host}` : `${lowerScheme}://${host}:${port}`;
}

function lenient(text: string): string | undefined {
  try {
    return normaliseOrigin(text);
  } catch {
    return undefined;
  }
}

/**
 * The canonical form of an origin as someone may spell it when looking one
 * up (removal, matching): also forgives one trailing slash. Undefined when it
 * is no origin at all.
 */
export function lookupOrigin(input: string): string | undefined {
  const text = input.trim();
  return lenient(text) ?? (text.endsWith('/') ? lenient(text.slice(0, -1)) : undefined);
}

/**
 * Browsers send origins canonical; a hand-written `Origin` (upper case, a
 * default or zero-padded port) is compared in canonical form. The cheap test
 * first: most misses are simply other origins.
 */
function canonicalOfSent(origin: string): string {
  return /[A-Z]|:0|:(?:80|443)$/.test(origin) ? (lookupOrigin(origin) ?? '') : '';
}

export class CorsList {
  readonly #ctx: DaemonContext;
  #origins = new Set<string>();
  #timer: NodeJS.Timeout | undefined;

  constructor(ctx: DaemonContext) {
    this.#ctx = ctx;
  }

  has(origin: string): boolean {
    return this.#origins.has(origin);
  }

  get list(): string[] {
    return [...this.#origins].sort();
  }

  async reload(): Promise<void> {
    const rows = await this.#ctx.db.selectFrom('cors_origins').select('origin').execute();
    this.#origins = new Set(rows.map((r) => r.origin));
  }

  start(): void {
    this.#timer = setInterval(() => this.reload().catch((err) => this.#ctx.log.warn({ err }, 'cors reload failed')), REFRESH_MS);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  /** Middleware: headers for allow-listed origins under `/api/`, preflights answered 204. */
  middleware(): RouteHandler {
    return (req: IncomingMessage, res: ServerResponse, next) => {
      const origin = req.headers.origin;
      if (typeof origin !== 'string' || this.#origins.size === 0 || !(req.url ?? '').startsWith('/api/')) {
        next();
        return;
      }
      // The answer depends on the origin from here on: shared caches must key on it.
      res.setHeader('Vary', 'Origin');
      if (!this.#origins.has(origin) && !this.#origins.has(canonicalOfSent(origin))) {
        next();
        return;
      }
      res.setHeader('Access-Control-Allow-Origin', origin);
      res.setHeader('Access-Control-Allow-Credentials', 'true');
      if (req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined) {
        res.writeHead(204, {
          'Access-Control-Allow-Methods': ALLOW_METHODS,
          'Access-Control-Allow-Headers': ALLOW_HEADERS,
          'Access-Control-Max-Age': '600',
          'Content-Length': '0',
        });
        res.end();
        return;
      }
      res.setHeader('Access-Control-Expose-Headers', 'Link, WWW-Authenticate, History-Complete-From');
      next();
    };
  }
}

type Ops = Pick<typeof monitoringAdminOperations, 'listCorsOrigins' | 'addCorsOrigin' | 'removeCorsOrigin'>;

/** Handlers of `/admin/api/settings/cors-origins`. Adding a listed origin again is a no-op. */
export function corsHandlers(cors: CorsList): HandlersOf<Ops> {
  return {
    async listCorsOrigins() {
      // Read through: shows origins another pod added since the last refresh.
      await cors.reload();
      return { origins: cors.list };
    },

    async addCorsOrigin({ ctx, body }) {
      const origin = normaliseOrigin(body.origin);
      await ctx.db
        .insertInto('cors_origins')
        .values({ origin, created_at: Date.now() })
        .onConflict((oc) => oc.column('origin').doNothing())
        .execute();
      await cors.reload();
      return { origin, origins: cors.list };
    },

    async removeCorsOrigin({ ctx, query }) {
      // The canonical spelling finds the stored entry; the text as sent, a row stored before canonical forms.
      const candidates = [...new Set([lookupOrigin(query.origin), query.origin].filter((o): o is string => o !== undefined))];
      const result = await ctx.db.deleteFrom('cors_origins').where('origin', 'in', candidates).executeTakeFirst();
      await cors.reload();
      if (Number(result.numDeletedRows) === 0) throw notFound(`${query.origin} is not an allowed origin`);
      return { status: 'deleted' as const };
    },
  };
}
