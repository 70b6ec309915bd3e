import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { chownSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Runs an OCI image layout's image for the tests: with crun (an OCI runtime from
 * Debian) on the bundle umoci unpacks, the way an engine would run it: the image's
 * user, entrypoint, env and working dir, a read-only root with /tmp on tmpfs, the
 * data dir volume bind-mounted. Where crun cannot run containers here, the same
 * rootfs runs under `unshare` + `chroot --userspec` as the image's user.
 * Both share the host's network: the daemon listens on a loopback port.
 */
export interface Runner {
  mode: 'crun' | 'chroot';
  start(opts: { name: string; volume: string; args: string[]; env: Record<string, string> }): Container;
}

export interface Container {
  proc: ChildProcess;
  /** The pid of the container's main process, as the host sees it. */
  pid(): number;
  /** Runs a command in the container (its env plus `env`, its user) and returns its exit code and output. */
  exec(args: string[], env?: Record<string, string>): { status: number | null; output: string };
  stop(): Promise<void>;
}

interface OciSpec {
  process: { terminal: boolean; args: string[]; env: string[]; user: { uid: number; gid: number }; rlimits?: unknown };
  root: { path: string; readonly?: boolean };
  mounts: Array<{ destination: string; type?: string; source?: string; options?: string[] }>;
  linux: { namespaces: Array<{ type: string }>; resources?: unknown; cgroupsPath?: string };
}

const exited = (proc: ChildProcess) =>
  new Promise<void>((resolve) => (proc.exitCode !== null || proc.signalCode !== null ? resolve() : proc.once('exit', () => resolve())));

/**
 * crun with the cgroup manager off, in a private mount namespace that hides a
 * cgroup v2 mount under a v1 tree: crun refuses such hybrid hosts otherwise.
 */
function crunArgs(stateDir: string, args: string[]): string[] {
  const script = 'mountpoint -q /sys/fs/cgroup/unified && umount /sys/fs/cgroup/unified; exec crun "$@"';
  return ['-m', '--propagation', 'private', 'sh', '-c', script, 'crun', '--cgroup-manager=disabled', '--root', stateDir, ...args];
}
const crun = (stateDir: string, args: string[]) => spawn('unshare', crunArgs(stateDir, args), { stdio: ['ignore', 'pipe', 'pipe'] });
const crunSync = (stateDir: string, args: string[]) => spawnSync('unshare', crunArgs(stateDir, args), { encoding: 'utf8' });

/** Unpacks `layout:tag` into `dir` (a bundle: config.json and rootfs/) with umoci. */
export function unpack(layout: string, dir: string): OciSpec {
  execFileSync('umoci', ['unpack', '--image', `${layout}:latest`, dir], { stdio: ['ignore', 'ignore', 'pipe'] });
  return JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
}

export function crunRunner(bundle: string, spec: OciSpec, stateDir: string): Runner {
  return {
    mode: 'crun',
    start({ name, volume, args, env }) {
      const config: OciSpec = structuredClone(spec);
      config.process.terminal = false;
      config.process.args.push(...args);
      config.process.env.push(...Object.entries(env).map(([k, v]) => `${k}=${v}`));
      delete config.process.rlimits; // the sandbox refuses setrlimit; the host's limits apply
      delete config.linux.resources;
      delete config.linux.cgroupsPath;
      config.linux.namespaces = config.linux.namespaces.filter((ns) => ns.type !== 'network' && ns.type !== 'cgroup');
      config.root.readonly = true;
      config.mounts = config.mounts
        .filter((m) => m.destination !== '/sys/fs/cgroup' && m.destination !== '/var/lib/monctl')
        .concat(
          { destination: '/var/lib/monctl', type: 'bind', source: volume, options: ['rbind', 'rw'] },
          { destination: '/tmp', type: 'tmpfs', source: 'tmpfs', options: ['nosuid', 'nodev', 'mode=1777'] },
        );
      writeFileSync(join(bundle, 'config.json'), JSON.stringify(config));
      const proc = crun(stateDir, ['run', '--bundle', bundle, name]);
      return {
        proc,
        pid: () => JSON.parse(crunSync(stateDir, ['state', name]).stdout).pid,
        exec: (cmd, extra = {}) => {
          // As the image's user, as an engine runs a health check (crun exec alone would be root).
          const { uid, gid } = config.process.user;
          const env = Object.entries(extra).map(([k, v]) => `--env=${k}=${v}`);
          const r = crunSync(stateDir, ['exec', `--user=${uid}:${gid}`, ...env, name, ...cmd]);
          return { status: r.status, output: r.stdout + r.stderr };
        },
        async stop() {
          crunSync(stateDir, ['kill', name, 'SIGTERM']);
          await exited(proc);
          crunSync(stateDir, ['delete', '--force', name]);
        },
      };
    },
  };
}

/** The fallback: the unpacked rootfs under chroot as the image's user, its volume bind-mounted in a private namespace. */
export function chrootRunner(rootfs: string, spec: OciSpec): Runner {
  const { uid, gid } = spec.process.user;
  const imageEnv = Object.fromEntries(spec.process.env.map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
  const chroot = ['chroot', `--userspec=${uid}:${gid}`, rootfs];
  return {
    mode: 'chroot',
    start({ volume, args, env }) {
      const script = 'mount --bind "$1" "$2/var/lib/monctl" && mount -t tmpfs -o mode=1777 tmpfs "$2/tmp" && shift 2 && cd / && exec "$@"';
      const proc = spawn(
        'unshare',
        ['-m', '--propagation', 'private', 'sh', '-c', script, 'sh', volume, rootfs, ...chroot, ...spec.process.args, ...args],
        { stdio: ['ignore', 'pipe', 'pipe'], env: { ...imageEnv, ...env } },
      );
      return {
        proc,
        pid: () => proc.pid!,
        exec: (cmd, extra = {}) => {
          const r = spawnSync(chroot[0], [...chroot.slice(1), ...cmd], { encoding: 'utf8', env: { ...imageEnv, ...env, ...extra } });
          return { status: r.status, output: r.stdout + r.stderr };
        },
        async stop() {
          proc.kill('SIGTERM');
          await exited(proc);
        },
      };
    },
  };
}

/** A data dir volume as a fresh named volume is: empty, owned by the image's user. */
export function volumeFor(dir: string, spec: OciSpec): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chownSync(dir, spec.process.user.uid, spec.process.user.gid);
  return dir;
}
