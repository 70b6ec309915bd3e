import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/** Set by the bundler (scripts/bundle.ts): the built daemon serves its own copy of the assets. */
declare const MONCTL_BUILD_VERSION: string | undefined;

/** The Swagger UI files the explorer serves, with their types; the build copies exactly these. */
export const SWAGGER_ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

/**
 * Where they are. In development, the swagger-ui-dist package: its
 * absolute-path helper only, since the package's main module executes the
 * whole browser bundle (megabytes kept in the daemon's heap, which every full
 * GC marks). Built, `dist/swagger-ui/` beside the chunks: the published
 * package then depends on neither swagger-ui-dist nor its telemetry postinstall.
 */
export function swaggerAssetDir(): string {
  if (typeof MONCTL_BUILD_VERSION === 'string') return fileURLToPath(new URL('../swagger-ui/', import.meta.url));
  return createRequire(import.meta.url)('swagger-ui-dist/absolute-path.js')();
}
