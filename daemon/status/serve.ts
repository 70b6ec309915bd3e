import type { IncomingMessage, ServerResponse } from 'node:http';
import { notFound } from '../../src/errors.ts';
import { type Principal, resolvePrincipal } from '../auth/principal.ts';
import { NOSNIFF } from '../http/page-headers.ts';
import { varyWith } from '../http/vary.ts';
import type { Audience, PageRow } from './live-state.ts';
import { pickEncoding, type Representation } from './page-cache.ts';
import type { StatusState } from './state.ts';

export const audienceOf = (principal: Principal): Audience => (principal.kind === 'anonymous' ? 'anonymous' : 'user');

/**
 * Anonymous views may sit in shared caches for a few seconds (the page is the
 * same for every anonymous visitor); a logged-in view is private and
 * revalidated on every use. Both carry an ETag.
 */
function cacheControl(audience: Audience): string {
  return audience === 'anonymous' ? 'public, max-age=10' : 'private, no-cache';
}

function matches(req: IncomingMessage, etag: string): boolean {
  const header = req.headers['if-none-match'];
  if (!header) return false;
  const strip = (t: string) => t.trim().replace(/^W\//, '');
  return header === '*' || header.split(',').some((t) => strip(t) === strip(etag));
}

/**
 * Writes a representation: 304 when the client has it, else the body in the
 * best encoding the client accepts, with `Vary` naming what chose it (added
 * to what the response varies on already: CORS's `Origin`).
 */
export async function sendRepresentation(
  req: IncomingMessage,
  res: ServerResponse,
  rep: Representation,
  audience: Audience,
  headers: Record<string, string>,
): Promise<void> {
  const common = {
    ...headers,
    ETag: rep.etag,
    'Cache-Control': cacheControl(audience),
    Vary: varyWith(res, 'Accept-Encoding, Cookie, Authorization, X-API-KEY'),
    ...NOSNIFF,
  };
  if (matches(req, rep.etag)) {
    res.writeHead(304, common).end();
    return;
  }
  const encoding = pickEncoding(req.headers['accept-encoding']);
  const body = await rep.encoded(encoding);
  res.writeHead(200, {
    ...common,
    ...(encoding === 'identity' ? {} : { 'Content-Encoding': encoding }),
    'Content-Length': String(body.length),
  });
  res.end(req.method === 'HEAD' ? undefined : body);
}

/**
 * `GET /status/{slug}` (and `/status`), or its history page (`what`); on a custom
 * hostname (`principal` given: anonymous) `/` and `/history`.
 */
export async function servePage(
  state: StatusState,
  req: IncomingMessage,
  res: ServerResponse,
  page: PageRow | undefined,
  principal?: Principal,
  what: 'page' | 'history' = 'page',
): Promise<void> {
  if (!page) throw notFound('No such status page');
  const who = principal ?? (await resolvePrincipal(req, state.ctx.keys, state.ctx.sessions));
  const audience = audienceOf(who);
  const onHost = principal !== undefined;
  const { rep, csp } = what === 'history' ? await state.history(page, audience, onHost) : (await state.view(page, audience)).html(onHost);
  await sendRepresentation(req, res, rep, audience, {
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Security-Policy': csp,
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'same-origin',
  });
}
