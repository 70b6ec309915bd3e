import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { SWAGGER_ASSETS } from '../daemon/docs/swagger-assets.ts';
import { bundleAgent, bundleMain, DIST } from './bundle.ts';

/** `npm run build`: plain JavaScript in dist/ (the published package runs it; development runs the .ts sources). */
rmSync(DIST, { recursive: true, force: true });
await Promise.all([bundleMain(), bundleAgent('esm', join(DIST, 'agent.mjs'))]);

// The explorer's browser assets travel inside dist/ (daemon/docs/swagger-assets.ts says why).
const from: string = createRequire(import.meta.url)('swagger-ui-dist/absolute-path.js')();
mkdirSync(join(DIST, 'swagger-ui'));
for (const file of Object.keys(SWAGGER_ASSETS)) copyFileSync(join(from, file), join(DIST, 'swagger-ui', file));
process.stdout.write(`built ${DIST}\n`);
