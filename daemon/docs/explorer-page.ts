import { escapeHtml } from '../util/escape-html.ts';
import { EXPLORER_SCRIPT_PATH } from './explorer-script.ts';

/**
 * The HTML of the API explorer at `/api`: Swagger UI from the npm package, a
 * bar with the session (who, Log out / Log in) and the CSRF token for "Try it out".
 */

/** Who the explorer's session is, if any. */
export interface SessionView {
  username: string;
  role: string;
  csrfToken: string;
}

/**
 * The bar above Swagger UI: who is logged in with a logout form (POST /logout
 * with the CSRF token), or a link to /login (which returns to /api). The
 * notice is shown by the page when a call answers 401.
 */
function sessionBar(session: SessionView | undefined): string {
  const who = session
    ? `<span id="monctl-who">Logged in as <b>${escapeHtml(session.username)}</b> (${escapeHtml(session.role)})</span> · ` +
      '<form method="post" action="/logout"><input type="hidden" name="_csrf" ' +
      `value="${escapeHtml(session.csrfToken)}"><button type="submit" id="monctl-logout">Log out</button></form>`
    : '<span id="monctl-who">Not logged in</span> · <a href="/login" id="monctl-login">Log in</a>';
  return (
    `<div id="monctl-session">${who}<span id="monctl-auth-notice" role="alert" hidden> · ` +
    'The last call needs authentication: <a href="/login">log in</a> or use Authorize with an API key.</span></div>'
  );
}

const STYLE =
  '#monctl-session{font:14px system-ui,sans-serif;padding:8px 20px;background:#f3f3f3;border-bottom:1px solid #ddd}' +
  '#monctl-session form{display:inline}#monctl-session button{font:inherit;color:#06c;background:none;border:0;padding:0;cursor:pointer;text-decoration:underline}' +
  '#monctl-session a{color:#06c}#monctl-auth-notice{color:#b00020}';

/**
 * What the explorer may load: its own scripts only (no inline script: the
 * init is /swagger-ui/monctl-explorer.js), styles inline too (Swagger UI
 * sets style attributes), images from itself and data: URIs (its icons),
 * calls to itself. It may not be framed (it carries the session's CSRF token).
 */
export const EXPLORER_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

export function explorerPage(session: SessionView | undefined): string {
  // The session's CSRF token is data in a <meta> (read by the served script) so that "Try it out" works after /login.
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>monctl API explorer</title>
<meta name="monctl-csrf" content="${session ? escapeHtml(session.csrfToken) : ''}">
<link rel="stylesheet" href="/swagger-ui/swagger-ui.css"><link rel="icon" href="/swagger-ui/favicon-32x32.png">
<style>${STYLE}</style></head>
<body>${sessionBar(session)}<div id="swagger-ui"></div>
<script src="/swagger-ui/swagger-ui-bundle.js"></script>
<script src="/swagger-ui/swagger-ui-standalone-preset.js"></script>
<script src="${EXPLORER_SCRIPT_PATH}"></script>
</body></html>`;
}
