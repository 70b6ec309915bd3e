import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { bundleAgent, DIST } from './bundle.ts';

/**
 * `npm run build:agent`: the agent alone, twice over.
 * - `dist/agent.mjs`: one JavaScript file needing only Node (`node agent.mjs --server …`).
 * - `dist/monctl-agent`: a Node single executable application: this Node
 *   (the project's Node 24) with the agent bundle injected, which needs
 *   neither Node nor node_modules on the machine that runs it.
 * `--outdir DIR` writes them there instead of dist/.
 */
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';
const at = process.argv.indexOf('--outdir');
const out = at > 0 && process.argv[at + 1] ? resolve(process.argv[at + 1]) : DIST;
const work = join(out, '.sea');
const executable = join(out, 'monctl-agent');

rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });
await Promise.all([bundleAgent('esm', join(out, 'agent.mjs')), bundleAgent('cjs', join(work, 'agent.cjs'))]);

// The preparation blob: the bundle plus V8's code cache for it (a faster start), and the
// agent's young-generation cap, which bin/monctl passes to `monctl agent` on the command line.
const config = {
  main: join(work, 'agent.cjs'),
  output: join(work, 'agent.blob'),
  disableExperimentalSEAWarning: true,
  useCodeCache: true,
  execArgv: ['--max-semi-space-size=1'],
};
writeFileSync(join(work, 'sea-config.json'), JSON.stringify(config));
execFileSync(process.execPath, ['--experimental-sea-config', join(work, 'sea-config.json')], { stdio: 'inherit' });

copyFileSync(process.execPath, executable);
chmodSync(executable, 0o755);
// Node's release binary carries its debug symbols (about 18 MB); nobody debugs the agent with them.
const stripped = spawnSync('strip', [executable]).status === 0;
// postject's CLI in a child: its ELF writer prints a warning per note section it keeps as it is.
const postject = createRequire(import.meta.url).resolve('postject/dist/cli.js');
const injected = spawnSync(process.execPath, [postject, executable, 'NODE_SEA_BLOB', config.output, '--sentinel-fuse', SEA_FUSE], {
  encoding: 'utf8',
});
if (injected.status !== 0) throw new Error(`postject failed:\n${injected.stderr}`);
rmSync(work, { recursive: true, force: true });

const mb = (file: string) => `${(statSync(file).size / 1e6).toFixed(1)} MB`;
process.stdout.write(
  `built ${executable} (${mb(executable)}, Node ${process.versions.node}${stripped ? ', stripped' : ''}) and ${join(out, 'agent.mjs')} (${mb(join(out, 'agent.mjs'))})\n`,
);
