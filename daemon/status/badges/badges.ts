import type { IncomingMessage, ServerResponse } from 'node:http';
import { invalidField, notFound } from '../../../src/errors.ts';
import { type Principal, resolvePrincipal } from '../../auth/principal.ts';
import type { DaemonContext } from '../../context.ts';
import { parseQueryStrict } from '../../http/well-formed.ts';
import { NOSNIFF } from '../../http/page-headers.ts';
import { varyWith } from '../../http/vary.ts';
import { effectiveStatus } from '../../probes/results.ts';
import { visibleTo } from '../../monitoring/visibility.ts';
import { inMaintenance } from '../maintenance-read.ts';
import { pct, xmlChars } from '../render/escape.ts';
import { type UptimeWindow, WINDOWS, windowUptime } from './window-uptime.ts';

/** shields.io's named colours, as hex (badge-maker accepts both). */
export const COLOURS = {
  brightgreen: '#4c1',
  green: '#97ca00',
  yellowgreen: '#a4a61d',
  yellow: '#dfb317',
  orange: '#fe7d37',
  red: '#e05d44',
  blue: '#007ec6',
  lightgrey: '#9f9f9f',
} as const;

const STYLES = ['flat', 'flat-square'] as const;
type Style = (typeof STYLES)[number];

export interface BadgeText {
  label: string;
  message: string;
  color: string;
}

export function uptimeColour(value: number): string {
  if (value >= 99.9) return COLOURS.brightgreen;
  if (value >= 99) return COLOURS.green;
  if (value >= 97) return COLOURS.yellowgreen;
  if (value >= 95) return COLOURS.yellow;
  if (value >= 90) return COLOURS.orange;
  return COLOURS.red;
}

export function responseColour(ms: number): string {
  if (ms < 200) return COLOURS.brightgreen;
  if (ms < 500) return COLOURS.green;
  if (ms < 1000) return COLOURS.yellow;
  if (ms < 2000) return COLOURS.orange;
  return COLOURS.red;
}

function query(req: IncomingMessage): Map<string, string> {
  const url = req.url ?? '';
  const q = url.indexOf('?');
  return new Map(q < 0 ? [] : parseQueryStrict(url.slice(q + 1)));
}

/**
 * The resource a badge is for, as `GET /api/resources/{id}` shows it to the
 * caller (404 for one the caller may not see), and who the caller is.
 */
export async function badgeResource(ctx: DaemonContext, req: IncomingMessage) {
  const rawId = (req as { params?: Record<string, string> }).params?.id ?? '';
  if (!/^\d{1,15}$/.test(rawId)) throw invalidField('id', 'must be an integer');
  const q = query(req);
  const label = q.get('label');
  if (label !== undefined && label.length > 100) throw invalidField('label', 'must be at most 100 characters');
  const principal = await resolvePrincipal(req, ctx.keys, ctx.sessions);
  const row = await ctx.db
    .selectFrom('resources')
    .select(['id', 'name', 'active', 'current_status', 'latest_duration_ms'])
    .where('id', '=', Number(rawId))
    .where(visibleTo(principal))
    .executeTakeFirst();
  if (!row) throw notFound(`Resource ${rawId} does not exist`);
  return { row, principal, label };
}

/**
 * Writes a badge. Cacheable for 60 s: by anyone when anonymous, by the
 * caller's browser only when logged in (a logged-in caller may be shown a
 * resource anonymous ones are not: that badge is for no shared cache, as
 * status pages).
 */
export function sendBadge(req: IncomingMessage, res: ServerResponse, principal: Principal, svg: string): void {
  res.writeHead(200, {
    'Content-Type': 'image/svg+xml; charset=utf-8',
    'Content-Length': Buffer.byteLength(svg),
    'Cache-Control': principal.kind === 'anonymous' ? 'public, max-age=60' : 'private, max-age=60',
    'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'",
    Vary: varyWith(res, 'Cookie, Authorization, X-API-KEY'),
    ...NOSNIFF,
  });
  res.end(req.method === 'HEAD' ? undefined : svg);
}

/**
 * `GET /api/badges/{id}/status.svg|uptime.svg|response.svg`: shields.io badges
 * drawn by badge-maker (shields.io's own renderer, with its Verdana 11px
 * width table), with the visibility and caching of `badgeResource` and `sendBadge`.
 */
export function badgeRoute(ctx: DaemonContext, kind: 'status' | 'uptime' | 'response') {
  return async (req: IncomingMessage, res: ServerResponse) => {
    const q = query(req);
    const style = (q.get('style') ?? 'flat') as Style;
    if (!STYLES.includes(style)) throw invalidField('style', 'must be one of: flat, flat-square');
    const window = (q.get('window') ?? '30d') as UptimeWindow;
    if (kind === 'uptime' && !Object.hasOwn(WINDOWS, window)) throw invalidField('window', 'must be one of: 24h, 7d, 30d, 90d');
    const { row, principal, label } = await badgeResource(ctx, req);

    let text: BadgeText;
    if (kind === 'status') text = await statusText(ctx, row);
    else if (kind === 'uptime') {
      const value = await windowUptime(ctx.db, row.id, window);
      text = {
        label: `uptime ${window}`,
        message: value === null ? 'no data' : pct(value).replace(' ', ''),
        color: value === null ? COLOURS.lightgrey : uptimeColour(value),
      };
    } else {
      const ms = row.latest_duration_ms === null ? null : Number(row.latest_duration_ms);
      text = {
        label: 'response',
        message: ms === null ? 'no data' : `${ms} ms`,
        color: ms === null ? COLOURS.lightgrey : responseColour(ms),
      };
    }
    const { makeBadge } = await import('badge-maker');
    sendBadge(req, res, principal, makeBadge({ label: xmlChars(label ?? text.label), message: text.message, color: text.color, style }));
  };
}

async function statusText(ctx: DaemonContext, row: { id: number; active: number; current_status: string }): Promise<BadgeText> {
  const status = effectiveStatus(row.active, row.current_status);
  if (status !== 'inactive' && inMaintenance(ctx, row.id)) return { label: 'status', message: 'maintenance', color: COLOURS.blue };
  switch (status) {
    case 'available':
      return { label: 'status', message: 'up', color: COLOURS.brightgreen };
    case 'not_available':
      return { label: 'status', message: 'down', color: COLOURS.red };
    case 'inactive':
      return { label: 'status', message: 'paused', color: COLOURS.lightgrey };
    default:
      return { label: 'status', message: 'unknown', color: COLOURS.lightgrey };
  }
}
