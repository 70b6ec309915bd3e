import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../helpers/daemon.ts';

/**
 * Private networks made of Linux network namespaces, for checks that only an
 * agent can make (issue 19). A bridge on the host (the daemon listens on its
 * address) and one namespace per "site", joined to the bridge by a veth pair.
 * Inside a site, 127.0.0.1 is the site's own loopback: a target bound there
 * is reachable from that site's agent only; the daemon, on the host's
 * loopback, finds nothing at the same address.
 *
 * Needs root and iproute2 (`ip netns`, veth, bridge). Names carry this
 * process's pid, so concurrent test files do not collide.
 */
export interface Site {
  name: string;
  /** The site's address on the bridge. */
  address: string;
  /** Spawns `command args` inside the site. */
  spawn(command: string, args: string[], env?: Record<string, string>): ChildProcess;
}

export interface PrivateNetwork {
  /** The host's address on the bridge: what the daemon listens on and agents dial. */
  hostAddress: string;
  sites: Site[];
  close(): void;
}

const ip = (...args: string[]) => execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });

/** True when this machine lets us make namespaces and veth pairs (root, iproute2, a kernel that allows it). */
export function namespacesWork(): boolean {
  if (process.getuid?.() !== 0) return false;
  const probe = `mctprobe${process.pid}`;
  const made = spawnSync('ip', ['netns', 'add', probe]).status === 0;
  if (!made) return false;
  const veth = spawnSync('ip', ['link', 'add', `mcv${process.pid}`, 'type', 'veth', 'peer', 'name', `mcw${process.pid}`]).status === 0;
  if (veth) spawnSync('ip', ['link', 'del', `mcv${process.pid}`]);
  spawnSync('ip', ['netns', 'del', probe]);
  return veth;
}

/** A bridge and `count` sites on it (10.X.Y.0/24, X.Y from the pid). */
export function createPrivateNetwork(count: number): PrivateNetwork {
  const pid = process.pid;
  const subnet = `10.${64 + ((pid >> 8) % 64)}.${pid & 255}`;
  const bridge = `mcb${pid}`;
  const made: string[] = [];
  const close = () => {
    for (const ns of made) spawnSync('ip', ['netns', 'del', ns]);
    spawnSync('ip', ['link', 'del', bridge]);
  };
  try {
    ip('link', 'add', bridge, 'type', 'bridge');
    ip('addr', 'add', `${subnet}.1/24`, 'dev', bridge);
    ip('link', 'set', bridge, 'up');
    const sites: Site[] = [];
    for (let i = 1; i <= count; i++) {
      const ns = `mct${pid}-${i}`;
      const outer = `mco${pid}${i}`;
      const inner = `mci${pid}${i}`;
      ip('netns', 'add', ns);
      made.push(ns);
      ip('link', 'add', outer, 'type', 'veth', 'peer', 'name', inner);
      ip('link', 'set', outer, 'master', bridge);
      ip('link', 'set', outer, 'up');
      ip('link', 'set', inner, 'netns', ns);
      const address = `${subnet}.${10 + i}`;
      ip('-n', ns, 'addr', 'add', `${address}/24`, 'dev', inner);
      ip('-n', ns, 'link', 'set', inner, 'up');
      ip('-n', ns, 'link', 'set', 'lo', 'up');
      sites.push({
        name: ns,
        address,
        // `ip netns exec` execs the command: the child's pid is the command's own.
        spawn: (command, args, env = {}) =>
          spawn('ip', ['netns', 'exec', ns, command, ...args], {
            cwd: ROOT,
            env: { ...process.env, ...env },
            stdio: ['ignore', 'pipe', 'pipe'],
          }),
      });
    }
    return { hostAddress: `${subnet}.1`, sites, close };
  } catch (err) {
    close();
    throw err;
  }
}

const TARGET_SCRIPT = `
const { createServer } = require('node:http');
const { readFileSync } = require('node:fs');
const [file, port] = process.argv.slice(2);
createServer((req, res) => {
  const status = Number(readFileSync(file, 'utf8').trim()) || 200;
  res.writeHead(status).end('site target');
}).listen(Number(port), '127.0.0.1', () => process.stdout.write('listening\\n'));
`;

export interface SiteTarget {
  url: string;
  /** What the target answers from now on. */
  setStatus(status: number): void;
  close(): Promise<void>;
}

/**
 * An HTTP target on the site's own 127.0.0.1:`port` (a child process inside
 * the namespace), answering the status in a file the test rewrites.
 */
export async function startSiteTarget(site: Site, port: number): Promise<SiteTarget> {
  const dir = mkdtempSync(join(tmpdir(), 'monctl-site-'));
  const file = join(dir, 'status');
  const script = join(dir, 'target.cjs');
  writeFileSync(file, '200');
  writeFileSync(script, TARGET_SCRIPT);
  const proc = site.spawn(join(ROOT, 'node_modules/.bin/node'), [script, file, String(port)]);
  let stderr = '';
  proc.stderr!.on('data', (c) => (stderr += c));
  await new Promise<void>((resolve, reject) => {
    proc.stdout!.once('data', () => resolve());
    proc.once('exit', (code) => reject(new Error(`site target exited with ${code}: ${stderr}`)));
  });
  return {
    url: `http://127.0.0.1:${port}/`,
    setStatus: (status) => writeFileSync(file, String(status)),
    async close() {
      if (proc.exitCode === null && proc.signalCode === null) {
        const exited = new Promise((r) => proc.once('exit', r));
        proc.kill('SIGKILL');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
