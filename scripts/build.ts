import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { SWAGGER_ASSETS } from '../daemon/docs/swagger-assets.ts';
import { bundleAgent, bundleMain, DIST } from './bundle.ts';

/**
 * `npm run build`: plain JavaScript in dist/ (the published package runs it; development runs the .ts sources).
 * `--outdir DIR` builds elsewhere: the image build does, so that it never rebuilds dist/ under a concurrent `npm pack`.
 */
const at = process.argv.indexOf('--outdir');
const out = at > 0 && process.argv[at + 1] ? resolve(process.argv[at + 1]!) : DIST;
rmSync(out, { recursive: true, force: true });
await Promise.all([bundleMain(out), bundleAgent('esm', join(out, 'agent.mjs'))]);

// The explorer's browser assets travel inside dist/ (daemon/docs/swagger-assets.ts says why).
const from: string = createRequire(import.meta.url)('swagger-ui-dist/absolute-path.js')();
mkdirSync(join(out, 'swagger-ui'));
for (const file of Object.keys(SWAGGER_ASSETS)) copyFileSync(join(from, file), join(out, 'swagger-ui', file));
process.stdout.write(`built ${out}\n`);
