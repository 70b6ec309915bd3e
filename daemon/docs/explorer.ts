import { createReadStream } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream';
import type { DaemonContext } from '../context.ts';
import { readCookie } from '../http/cookies.ts';
import type { RouterLike } from '../http/router-like.ts';
import { SESSION_COOKIE } from '../auth/sessions.ts';
import { NOSNIFF, pageHeaders } from '../http/page-headers.ts';
import { EXPLORER_CSP, explorerPage } from './explorer-page.ts';
import { EXPLORER_SCRIPT, EXPLORER_SCRIPT_PATH } from './explorer-script.ts';
import { buildOpenApi } from './openapi.ts';
import { SWAGGER_ASSETS, swaggerAssetDir } from './swagger-assets.ts';

const assetDir = swaggerAssetDir();

/** `/v3/api-docs` (the generated OpenAPI document) and the Swagger UI at `/api`, served from the npm package. */
export function explorerRoutes(ctx: DaemonContext) {
  let doc: string | undefined;
  return (router: RouterLike) => {
    router.get('/v3/api-docs', (_req, res) => {
      doc ??= JSON.stringify(buildOpenApi());
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(doc), ...NOSNIFF }).end(doc);
    });
    router.get('/api', async (req, res) => {
      const sessionId = readCookie(req, SESSION_COOKIE);
      const session = sessionId ? await ctx.sessions.find(sessionId) : undefined;
      const html = explorerPage(session);
      res.writeHead(200, { ...pageHeaders(EXPLORER_CSP), 'Content-Length': Buffer.byteLength(html) }).end(html);
    });
    // The page's own script (no inline script, so the CSP allows only 'self'); before /:file, which would pass it on.
    router.get(EXPLORER_SCRIPT_PATH, (_req, res) => {
      res
        .writeHead(200, {
          'Content-Type': 'text/javascript; charset=utf-8',
          'Content-Length': Buffer.byteLength(EXPLORER_SCRIPT),
          'Cache-Control': 'no-cache',
          ...NOSNIFF,
        })
        .end(EXPLORER_SCRIPT);
    });
    router.get('/swagger-ui/:file', (req, res, next) => {
      const file = (req as { params?: Record<string, string> }).params?.file ?? '';
      const type = Object.hasOwn(SWAGGER_ASSETS, file) ? SWAGGER_ASSETS[file] : undefined;
      if (!type) return next();
      res.writeHead(200, { 'Content-Type': type, 'Cache-Control': 'public, max-age=86400', ...NOSNIFF });
      // pipeline, not pipe: a client that leaves mid-download must not leave the file open.
      pipeline(createReadStream(join(assetDir, file)), res, () => {});
    });
    router.get('/', (_req, res) => {
      res.writeHead(302, { Location: '/api' }).end();
    });
  };
}
