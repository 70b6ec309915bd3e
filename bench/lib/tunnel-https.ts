/**
 * The HTTPS row of `npm run bench:tunnel` (issue 17): the same wrk load over
 * TLS (HTTP/1.1, keep-alive) through the daemon's HTTPS edge and the tunnel,
 * and through nginx terminating TLS in front of the same target, in the same
 * run. Both serve a certificate for `localhost` (so that wrk sends SNI and
 * resolves the name to 127.0.0.1) made by a throwaway CA; nginx runs one
 * worker, as the daemon is one process.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { operations } from '../../src/api/operations.ts';
import type { ApiClient } from '../../src/client/api-client.ts';
import { freePort } from '../../test/helpers/free-port.ts';
import { makePki } from '../../test/helpers/tls.ts';
import { ensureTools } from '../../test/setup/provision.ts';
import { fmt } from './load.ts';

interface Figures {
  rps: number;
  p50: number;
  p99: number;
  mbps: number;
  errors: number;
}

export interface HttpsBench {
  admin: ApiClient;
  agentId: number;
  /** `http://127.0.0.1:PORT` of the target. */
  target: string;
  /** The daemon's `--edge-tls-listen` URL. */
  edgeTls: string;
  dir: string;
  seconds: number;
  connections: number;
  wrk(url: string, host: string, connections: number, seconds: number): Figures;
}

function nginxConf(dir: string, port: number, target: string, certFile: string, keyFile: string): string {
  return `worker_processes 1;
daemon off;
pid ${dir}/nginx.pid;
error_log ${dir}/nginx-error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${dir}/nginx-body;
  proxy_temp_path ${dir}/nginx-proxy;
  fastcgi_temp_path ${dir}/nginx-fastcgi;
  uwsgi_temp_path ${dir}/nginx-uwsgi;
  scgi_temp_path ${dir}/nginx-scgi;
  upstream target { server ${new URL(target).host}; keepalive 64; }
  server {
    listen 127.0.0.1:${port} ssl;
    ssl_certificate ${certFile};
    ssl_certificate_key ${keyFile};
    ssl_protocols TLSv1.2 TLSv1.3;
    keepalive_requests 100000;
    location / {
      proxy_pass http://target;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_max_temp_file_size 0;
    }
  }
}
`;
}

async function startNginx(conf: string): Promise<ChildProcess> {
  const proc = spawn('nginx', ['-c', conf], { stdio: ['ignore', 'ignore', 'inherit'] });
  await new Promise((r) => setTimeout(r, 500));
  if (proc.exitCode !== null) throw new Error(`nginx exited with ${proc.exitCode}`);
  return proc;
}

/** Measures and prints the HTTPS rows: small responses, then 100 MB downloads. */
export async function httpsBench(b: HttpsBench): Promise<void> {
  ensureTools({ nginx: 'nginx' });
  const pki = makePki('bench HTTPS CA');
  const pair = pki.issueNames('localhost', 1, ['localhost']);
  let nginx: ChildProcess | undefined;
  try {
    // wrk ran synchronously before this: let the API client see the keep-alive connections the daemon closed meanwhile.
    await new Promise((r) => setTimeout(r, 200));
    await b.admin.call(operations.uploadCertificate, { body: { certificate: pair.cert, privateKey: pair.key } });
    await b.admin.call(operations.createRoute, {
      body: { name: 'bench-https', type: 'HTTP', agentId: b.agentId, target: b.target, hostname: 'localhost' },
    });
    const port = await freePort();
    const conf = join(b.dir, 'nginx.conf');
    writeFileSync(conf, nginxConf(b.dir, port, b.target, pair.certFile, pair.keyFile));
    nginx = await startNginx(conf);
    const edgePort = new URL(b.edgeTls).port;
    const url = (p: string, path: string) => `https://localhost:${p}${path}`;
    b.wrk(url(edgePort, '/'), 'localhost', b.connections, 1); // warm-up: TLS sessions, JIT
    const rows: Array<[string, Figures, Figures]> = [];
    for (const [name, path, conns] of [
      ['https small', '/', b.connections],
      ['https 100 MB', '/big', 4],
    ] as const) {
      rows.push([
        name,
        b.wrk(url(String(port), path), 'localhost', conns, b.seconds),
        b.wrk(url(edgePort, path), 'localhost', conns, b.seconds),
      ]);
    }
    console.log(
      `\nHTTPS (TLS 1.3, HTTP/1.1 keep-alive): nginx ${'(1 worker)'} terminating TLS in front of the target, and the daemon's HTTPS edge through the tunnel.`,
    );
    console.log('load              path     req/s       p50 ms   p99 ms   MB/s      errors');
    for (const [name, direct, tunnel] of rows) {
      for (const [label, f] of [
        ['nginx', direct],
        ['tunnel', tunnel],
      ] as const) {
        console.log(
          `${name.padEnd(17)} ${label.padEnd(8)} ${fmt(f.rps).padStart(10)} ${fmt(f.p50, 2).padStart(8)} ${fmt(f.p99, 2).padStart(8)} ${fmt(f.mbps).padStart(9)} ${String(f.errors).padStart(7)}`,
        );
      }
      console.log(
        `${name.padEnd(17)} ratio    ${fmt(tunnel.rps / direct.rps, 2).padStart(10)} ${''.padStart(17)} ${fmt(tunnel.mbps / direct.mbps, 2).padStart(9)}   (tunnel / nginx)`,
      );
    }
  } finally {
    nginx?.kill('SIGTERM');
    pki.cleanup();
  }
}
