import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { edge, startTunnel, type Tunnel } from './helpers.ts';

/** https targets: certificates are verified unless the agent runs with --skip-tls. */
describe('tunnel: https targets', () => {
  let tunnel: Tunnel;
  let server: Server;

  beforeAll(async () => {
    tunnel = await startTunnel();
    const key = join(tunnel.dir, 'key.pem');
    const cert = join(tunnel.dir, 'cert.pem');
    const made = spawnSync(
      'openssl',
      ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1'],
      { encoding: 'utf8' },
    );
    expect(made.status, made.stderr).toBe(0);
    server = createServer({ key: readFileSync(key), cert: readFileSync(cert) }, (req, res) => res.end(`secure ${req.url}`));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    await tunnel.httpRoute('secure', `https://127.0.0.1:${port}`, 'secure.test');
  });
  afterAll(async () => {
    await tunnel?.close();
    server?.closeAllConnections();
    server?.close();
  });

  it('refuses a self-signed target certificate with 502', async () => {
    const res = await edge(tunnel.daemon.edgeUrl, 'secure.test', 'GET', '/x');
    expect(res.status).toBe(502);
    expect(JSON.parse(res.text).detail).toMatch(/SELF_SIGNED|self.signed/i);
  });

  it('accepts it with --skip-tls', async () => {
    await tunnel.agent.stop('SIGTERM');
    await tunnel.waitStatus('DISCONNECTED');
    tunnel.agent = tunnel.startAgent(['--skip-tls']);
    await tunnel.waitStatus('CONNECTED');
    const res = await edge(tunnel.daemon.edgeUrl, 'secure.test', 'GET', '/x');
    expect(res.status).toBe(200);
    expect(res.text).toBe('secure /x');
  });
});
