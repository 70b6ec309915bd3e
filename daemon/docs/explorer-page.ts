import { SESSION_SCHEME } from './openapi.ts';

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

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/**
 * The bar above Swagger UI: who is logged in with a logout form (POST /logout
 * with the CSRF token), or a link to /login (which returns to /api). The
 * notice is shown by the page when a call answers 401.
 */
function sessionBar(session: SessionView | undefined): string {
  const who = session
    ? `<span id="monctl-who">Logged in as <b>${escapeHtml(session.username)}</b> (${escapeHtml(session.role)})</span> · `
      + '<form method="post" action="/logout"><input type="hidden" name="_csrf" '
      + `value="${escapeHtml(session.csrfToken)}"><button type="submit" id="monctl-logout">Log out</button></form>`
    : '<span id="monctl-who">Not logged in</span> · <a href="/login" id="monctl-login">Log in</a>';
  return `<div id="monctl-session">${who}<span id="monctl-auth-notice" role="alert" hidden> · `
    + 'The last call needs authentication: <a href="/login">log in</a> or use Authorize with an API key.</span></div>';
}

const STYLE = '#monctl-session{font:14px system-ui,sans-serif;padding:8px 20px;background:#f3f3f3;border-bottom:1px solid #ddd}'
  + '#monctl-session form{display:inline}#monctl-session button{font:inherit;color:#06c;background:none;border:0;padding:0;cursor:pointer;text-decoration:underline}'
  + '#monctl-session a{color:#06c}#monctl-auth-notice{color:#b00020}';

/**
 * A Swagger UI plugin: the Authorize dialog leaves out the session cookie
 * scheme. A browser cannot set an HttpOnly cookie from a form field; the
 * session is used by logging in at /login, and the document keeps the scheme
 * so that other clients know cookies work.
 */
const HIDE_SESSION_SCHEME = `() => ({ statePlugins: { auth: { wrapSelectors: {
  definitionsToAuthorize: (ori) => (state, ...args) => {
    const list = ori(...args);
    return list && list.map ? list.map((defs) => defs.delete ? defs.delete(${JSON.stringify(SESSION_SCHEME)}) : defs).filter((defs) => defs.size !== 0) : list;
  },
} } } })`;

export function explorerPage(session: SessionView | undefined): string {
  // The session's CSRF token is embedded so that "Try it out" works after /login.
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>monctl API explorer</title>
<link rel="stylesheet" href="/swagger-ui/swagger-ui.css"><link rel="icon" href="/swagger-ui/favicon-32x32.png">
<style>${STYLE}</style></head>
<body>${sessionBar(session)}<div id="swagger-ui"></div>
<script src="/swagger-ui/swagger-ui-bundle.js"></script>
<script src="/swagger-ui/swagger-ui-standalone-preset.js"></script>
<script>
const csrf = ${JSON.stringify(session?.csrfToken ?? null)};
window.ui = SwaggerUIBundle({
  url: '/v3/api-docs', dom_id: '#swagger-ui', deepLinking: true, persistAuthorization: true,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset], layout: 'StandaloneLayout',
  plugins: [${HIDE_SESSION_SCHEME}],
  requestInterceptor: (r) => { if (csrf) r.headers['X-CSRF-TOKEN'] = csrf; return r; },
  responseInterceptor: (r) => {
    if (r.status === 401) document.getElementById('monctl-auth-notice').hidden = false;
    else if (r.status < 400) document.getElementById('monctl-auth-notice').hidden = true;
    return r;
  },
});
</script></body></html>`;
}
