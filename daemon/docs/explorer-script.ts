import { SESSION_SCHEME } from './openapi.ts';

/**
 * The explorer's own script, served at `/swagger-ui/monctl-explorer.js` so
 * that the page carries no inline script and its CSP can say `script-src
 * 'self'`. A string in a module (not a file beside it) so that the esbuild
 * bundle carries it without a copy step. It reads the session's CSRF token
 * from `<meta name="monctl-csrf">`: data, never code, in the page.
 */
export const EXPLORER_SCRIPT_PATH = '/swagger-ui/monctl-explorer.js';

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

export const EXPLORER_SCRIPT = `'use strict';
(() => {
  const meta = document.querySelector('meta[name="monctl-csrf"]');
  const csrf = meta && meta.content ? meta.content : null;
  const notice = () => document.getElementById('monctl-auth-notice');
  window.ui = SwaggerUIBundle({
    url: '/v3/api-docs', dom_id: '#swagger-ui', deepLinking: true, persistAuthorization: true,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset], layout: 'StandaloneLayout',
    plugins: [${HIDE_SESSION_SCHEME}],
    requestInterceptor: (r) => { if (csrf) r.headers['X-CSRF-TOKEN'] = csrf; return r; },
    responseInterceptor: (r) => {
      if (r.status === 401) notice().hidden = false;
      else if (r.status < 400) notice().hidden = true;
      return r;
    },
  });
})();
`;
