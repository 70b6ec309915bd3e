import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/**
 * The Debian tools the suites drive for real, by the command each provides.
 * One list for the whole suite: a test that needs a new tool adds a row here,
 * never an install step of its own, and never a silent skip.
 */
export const REQUIRED_TOOLS: Record<string, string> = {
  promtool: 'prometheus', // the metrics exposition format
  chromium: 'chromium', // the API explorer, in a real browser
  'docker-registry': 'docker-registry', // registry probes against a real registry
  skopeo: 'skopeo', // pushes test images
  umoci: 'umoci', // builds test images without Docker; unpacks monctl's image into a runtime bundle
  crun: 'crun', // runs monctl's own image (test/install/image.test.ts)
  tmux: 'tmux', // drives the TUIs end to end
  openssl: 'openssl', // throwaway CAs and certificates
  perl: 'perl', // bcrypt for the registry's htpasswd
  'systemd-analyze': 'systemd', // verifies the shipped unit files
  pebble: 'pebble', // a real ACME server for the HTTPS edge's certificates
  'pebble-challtestsrv': 'pebble', // pebble's DNS: every test hostname is 127.0.0.1
  curl: 'curl', // fetches through the HTTPS edge, verifying the chain
  pg_ctlcluster: 'postgresql', // a throw-away PostgreSQL server: the suites' second backend, and the pods
  ip: 'iproute2', // network namespaces: targets only an agent can reach
  script: 'util-linux', // a pty for the CLI's password prompt
  sshd: 'openssh-server', // SSH checks against a real sshd
  'ssh-keygen': 'openssh-client', // that sshd's host key
  dnsmasq: 'dnsmasq', // DNS checks against a real server, over UDP and TCP
  nft: 'nftables', // PING checks: a namespace that drops echoes
  knotd: 'knot', // an authoritative DNS server taking RFC 2136 updates with TSIG: ACME DNS-01
};

/**
 * The tools `npm run bench:tunnel` drives, by command: its load generator and
 * the peers monctl is measured against (nginx, ssh -R to a private sshd).
 * Installed by ensureTools like the suites' own; a peer whose tool still
 * cannot be had is skipped with the reason printed.
 */
export const TUNNEL_BENCH_TOOLS: Record<string, string> = {
  wrk: 'wrk', // the load generator
  nginx: 'nginx-light', // the one-hop reverse proxy, and the HTTP front of ssh -R
  sshd: 'openssh-server', // the private sshd that ssh -R forwards through
  ssh: 'openssh-client', // ssh -R itself
  strace: 'strace', // syscalls per request of each path's processes
};

/** The baselines of `npm run bench:probes -- --type <t>` (installed by the module that needs one). */
export const PROBE_BENCH_TOOLS: Record<string, string> = {
  fping: 'fping', // PING: the same echoes from a dedicated pinger
};

function onPath(command: string, path = process.env.PATH ?? ''): boolean {
  return path.split(delimiter).some((dir) => {
    try {
      accessSync(join(dir, command), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** The packages whose command is missing, each once, in a stable order. */
export function missingPackages(tools = REQUIRED_TOOLS, has = onPath): string[] {
  return [
    ...new Set(
      Object.entries(tools)
        .filter(([command]) => !has(command))
        .map(([, pkg]) => pkg),
    ),
  ].sort();
}

export function installLine(packages: string[]): string {
  return `apt-get install -y --no-install-recommends ${packages.join(' ')}`;
}

function run(command: string, args: string[]): void {
  const result = spawnSync(command, args, {
    stdio: ['ignore', 'ignore', 'pipe'],
    encoding: 'utf8',
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
  if (result.status !== 0) {
    throw new Error(
      `provision: \`${command} ${args.join(' ')}\` failed (${result.error?.message ?? `exit ${result.status}`})\n${result.stderr ?? ''}`,
    );
  }
}

/**
 * Installs the packages of `tools` whose command is missing with apt-get when
 * this is root; otherwise stops at once with the exact line to run.
 */
export function ensureTools(tools: Record<string, string>): void {
  const missing = missingPackages(tools);
  if (missing.length === 0) return;
  const line = installLine(missing);
  if (process.getuid?.() !== 0) {
    throw new Error(
      `Debian packages that the tests or benches drive are missing (${missing.join(' ')}); as root, run:\n  apt-get update && ${line}`,
    );
  }
  process.stderr.write(`provision: installing ${missing.join(' ')} (apt-get)\n`);
  run('apt-get', ['update', '-qq']);
  run('apt-get', line.split(' ').slice(1).concat('-qq'));
  const still = missingPackages(tools);
  if (still.length > 0) throw new Error(`provision: still missing after apt-get: ${still.join(' ')}`);
}

/** vitest global setup: the suites' tools (REQUIRED_TOOLS). */
export default function provision(): void {
  ensureTools(REQUIRED_TOOLS);
}
