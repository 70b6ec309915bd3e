/**
 * Headers of every HTML page the daemon serves (the explorer, the login
 * form): its CSP, never framed (`frame-ancestors 'none'` and, for browsers
 * without CSP 3, `X-Frame-Options: DENY`), never sniffed, never cached, and
 * no Referer to other origins. The pages carry CSRF tokens: a page that could
 * be framed could be clicked through by another site.
 */
export function pageHeaders(csp: string): Record<string, string> {
  return {
    'Content-Type': 'text/html; charset=utf-8',
    'Cache-Control': 'no-store',
    'Content-Security-Policy': csp,
    'X-Frame-Options': 'DENY',
    ...NOSNIFF,
    'Referrer-Policy': 'same-origin',
  };
}

/** For every other response the daemon writes itself: its declared type is the type. */
export const NOSNIFF = { 'X-Content-Type-Options': 'nosniff' } as const;
