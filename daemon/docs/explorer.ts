import { createReadStream } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream';
import type { DaemonContext } from '../context.ts';
import { readCookie } from '../http/cookies.ts';
import type { RouterLike } from '../http/router-like.ts';
import { SESSION_COOKIE } from '../auth/sessions.ts';
import { buildOpenApi } from './openapi.ts';
import { SWAGGER_ASSETS, swaggerAssetDir } from './swagger-assets.ts';

const assetDir = swaggerAssetDir();

function page(csrf: string | null): string {
  // The session's CSRF token is embedded so that "Try it out" works after /login.
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>monctl API explorer</title>
<link rel="stylesheet" href="/swagger-ui/swagger-ui.css"><link rel="icon" href="/swagger-ui/favicon-32x32.png"></head>
<body><div id="swagger-ui"></div>
<script src="/swagger-ui/swagger-ui-bundle.js"></script>
<script src="/swagger-ui/swagger-ui-standalone-preset.js"></script>
<script>
const csrf = ${JSON.stringify(csrf)};
window.ui = SwaggerUIBundle({
  url: '/v3/api-docs', dom_id: '#swagger-ui', deepLinking: true, persistAuthorization: true,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset], layout: 'StandaloneLayout',
  requestInterceptor: (r) => { if (csrf) r.headers['X-CSRF-TOKEN'] = csrf; return r; },
});
</script></body></html>`;
}

/** `/v3/api-docs` (the generated OpenAPI document) and the Swagger UI at `/api`, served from the npm package. */
export function explorerRoutes(ctx: DaemonContext) {
  let doc: string | undefined;
  return (router: RouterLike) => {
    router.get('/v3/api-docs', (_req, res) => {
      doc ??= JSON.stringify(buildOpenApi());
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(doc) }).end(doc);
    });
    router.get('/api', async (req, res) => {
      const sessionId = readCookie(req, SESSION_COOKIE);
      const session = sessionId ? await ctx.sessions.find(sessionId) : undefined;
      const html = page(session?.csrfToken ?? null);
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' }).end(html);
    });
    router.get('/swagger-ui/:file', (req, res, next) => {
      const file = (req as { params?: Record<string, string> }).params?.file ?? '';
      const type = Object.hasOwn(SWAGGER_ASSETS, file) ? SWAGGER_ASSETS[file] : undefined;
      if (!type) return next();
      res.writeHead(200, { 'Content-Type': type, 'Cache-Control': 'public, max-age=86400' });
      // pipeline, not pipe: a client that leaves mid-download must not leave the file open.
      pipeline(createReadStream(join(assetDir, file)), res, () => {});
    });
    router.get('/', (_req, res) => {
      res.writeHead(302, { Location: '/api' }).end();
    });
  };
}

