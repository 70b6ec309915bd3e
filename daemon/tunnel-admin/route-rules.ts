import { isIP } from 'node:net';
import { createServer } from 'node:net';
import type { RouteCreate, RouteType, RouteUpdate } from '../../src/api/schemas/tunnel.ts';
import { HttpError, invalidField } from '../../src/errors.ts';
import type { DaemonContext } from '../context.ts';
import type { RouteRow } from '../store/schema.ts';
import { normaliseHostname, normaliseRouteHostname } from '../util/hostname.ts';
import { normalisePath } from '../util/path-normalise.ts';
import { checkPool, type PoolDraft, poolFromCreate, poolFromUpdate } from './route-pool.ts';

/** A route as it will be stored, after defaults and merging. */
export interface RouteDraft {
  name: string;
  type: RouteType;
  target: string;
  hostname: string | null;
  pathPrefix: string | null;
  listenPort: number | null;
  allowEncodedSlashes: boolean;
  enabled: boolean;
  /** The pool (its first agent is `agent_id`), its policy, health check and header rules. */
  pool: PoolDraft;
}

/** `host:port` (IPv6 in brackets, port 1..65535). */
/** `host:port` of a TCP route (IPv6 in brackets), or undefined when it is not one. */
export function parseTcpTarget(text: string): { host: string; port: number } | undefined {
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(text);
  if (!m) return undefined;
  const port = Number(m[3]);
  if (port < 1 || port > 65535) return undefined;
  const valid = m[1] !== undefined ? isIP(m[1]) === 6 : normaliseHostname(m[2]) !== undefined;
  return valid ? { host: m[1] ?? m[2], port } : undefined;
}

export function validTcpTarget(text: string): boolean {
  return parseTcpTarget(text) !== undefined;
}

function validHttpTarget(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/** Fields of one type sent for a route of the other type: a mistake worth a 400, not silence. */
function rejectForeignFields(type: RouteType, body: RouteCreate | RouteUpdate): void {
  if (type === 'HTTP' && body.listenPort !== undefined) throw invalidField('listenPort', 'only TCP routes have a listenPort');
  if (type === 'TCP' && body.hostname !== undefined) throw invalidField('hostname', 'only HTTP routes have a hostname');
  if (type === 'TCP' && body.pathPrefix !== undefined) throw invalidField('pathPrefix', 'only HTTP routes have a pathPrefix');
  if (type === 'TCP' && body.allowEncodedSlashes !== undefined)
    throw invalidField('allowEncodedSlashes', 'only HTTP routes have allowEncodedSlashes');
}

/** The stored shape of a new route, validated field by field (400 naming the field). */
export function draftFromCreate(body: RouteCreate): RouteDraft {
  rejectForeignFields(body.type, body);
  const pool = poolFromCreate(body);
  checkPool(body.type, pool, body);
  return checkDraft({
    name: body.name,
    type: body.type,
    pool,
    target: body.target,
    hostname: body.hostname ?? null,
    pathPrefix: body.type === 'HTTP' ? (body.pathPrefix ?? '/') : null,
    listenPort: body.listenPort ?? null,
    allowEncodedSlashes: body.type === 'HTTP' && (body.allowEncodedSlashes ?? false),
    enabled: body.enabled ?? true,
  });
}

/** PUT: given fields replace the stored ones; a change of type drops the old type's fields. */
export function draftFromUpdate(row: RouteRow, current: PoolDraft, body: RouteUpdate): RouteDraft {
  const type = body.type ?? (row.type as RouteType);
  rejectForeignFields(type, body);
  const sameType = type === row.type;
  const pool = poolFromUpdate(current, body, type);
  checkPool(type, pool, body);
  return checkDraft({
    name: body.name ?? row.name,
    type,
    pool,
    target: body.target ?? row.target,
    hostname: type === 'HTTP' ? (body.hostname ?? (sameType ? row.hostname : null)) : null,
    pathPrefix: type === 'HTTP' ? (body.pathPrefix ?? (sameType ? row.path_prefix : null) ?? '/') : null,
    listenPort: type === 'TCP' ? (body.listenPort ?? (sameType && row.listen_port !== null ? Number(row.listen_port) : null)) : null,
    allowEncodedSlashes: type === 'HTTP' && (body.allowEncodedSlashes ?? (sameType && Boolean(row.allow_encoded_slashes))),
    enabled: body.enabled ?? Boolean(row.enabled),
  });
}

/**
 * The edge matches normalised paths, so a prefix that is not in normal form could never match:
 * a 400 that says the form to use, rather than a route that silently serves nothing.
 */
function checkPrefixNormal(prefix: string, allowEncodedSlashes: boolean): void {
  const normal = normalisePath(prefix);
  if ('error' in normal) throw invalidField('pathPrefix', `is refused by the edge: ${normal.error}`);
  if (normal.path !== prefix) throw invalidField('pathPrefix', `must be in normal form: ${normal.path}`);
  if (normal.encodedSlash && !allowEncodedSlashes) throw invalidField('pathPrefix', 'holds an encoded slash; set allowEncodedSlashes');
}

function checkDraft(d: RouteDraft): RouteDraft {
  d.pool.agents.forEach((a, i) => {
    if (a.target === null) return;
    const valid = d.type === 'HTTP' ? validHttpTarget(a.target) : validTcpTarget(a.target);
    if (!valid) throw invalidField(`agents[${i}].target`, d.type === 'HTTP' ? 'must be an http:// or https:// URL' : 'must be host:port');
  });
  if (d.type === 'HTTP') {
    if (d.hostname === null) throw invalidField('hostname', 'is required for HTTP routes');
    const host = normaliseRouteHostname(d.hostname);
    if (!host) throw invalidField('hostname', 'must be a DNS name, an IP address, or a wildcard *.example.com');
    if (!/^\/[^\s?#]*$/.test(d.pathPrefix ?? '')) throw invalidField('pathPrefix', 'must start with / and contain no spaces, ? or #');
    checkPrefixNormal(d.pathPrefix!, d.allowEncodedSlashes);
    if (!validHttpTarget(d.target)) throw invalidField('target', 'must be an http:// or https:// URL');
    return { ...d, hostname: host };
  }
  if (d.listenPort === null) throw invalidField('listenPort', 'is required for TCP routes');
  if (!validTcpTarget(d.target)) throw invalidField('target', 'must be host:port (IPv6 in brackets, port 1..65535)');
  return d;
}

/** 409 when the port is the daemon's own; 409 or 400 when the OS will not let us listen on it. */
export async function checkPortFree(ctx: DaemonContext, port: number): Promise<void> {
  if (port === ctx.config.listen.port || port === ctx.config.edgeListen.port) {
    throw new HttpError(409, 'conflict', `Port ${port} is one of the daemon's own listeners`, {
      errors: [{ field: 'listenPort', message: "is one of the daemon's own listen ports" }],
    });
  }
  const code = await new Promise<string | undefined>((resolve) => {
    const server = createServer();
    server.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'EUNKNOWN'));
    server.listen({ port, host: ctx.config.edgeListen.host, exclusive: true }, () => server.close(() => resolve(undefined)));
  });
  if (code === undefined) return;
  if (code === 'EADDRINUSE') {
    throw new HttpError(409, 'conflict', `Port ${port} is in use`, { errors: [{ field: 'listenPort', message: 'is in use' }] });
  }
  throw invalidField('listenPort', `cannot listen on it (${code})`);
}
