import { connect } from 'node:net';
import type { TestDaemon } from '../helpers/daemon.ts';
import { send, type WireResponse } from '../helpers/http.ts';

/** JSON call with the daemon's ADMIN key in X-API-KEY (the seed's credential form). */
export function api(d: TestDaemon, method: string, path: string, body?: unknown, key = d.adminKey): Promise<WireResponse> {
  const headers: Record<string, string> = { 'x-api-key': key };
  if (body !== undefined) headers['content-type'] = 'application/json';
  return send(d.url, method, path, {
    headers,
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** Creates an agent and returns its id. */
export async function agent(d: TestDaemon, name: string): Promise<number> {
  const res = await api(d, 'POST', '/admin/api/agents', { name });
  if (res.status !== 200) throw new Error(res.text);
  return res.json().id;
}

/** Creates an HTTP route and returns it. */
export async function httpRoute(d: TestDaemon, name: string, agentId: number, hostname = `${name}.example.test`) {
  const res = await api(d, 'POST', '/admin/api/routes', { name, type: 'HTTP', agentId, hostname, target: 'http://127.0.0.1:9/' });
  if (res.status !== 200) throw new Error(res.text);
  return res.json();
}

/**
 * Dials `GET /admin/tunnel` like an agent and returns the status code of the
 * answer (101 when accepted); the socket is closed right after.
 */
export function dialTunnel(base: string, token: string): Promise<number> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    let buffer = '';
    socket.on('data', (chunk) => {
      buffer += chunk.toString('latin1');
      const m = /^HTTP\/1\.1 (\d{3})/.exec(buffer);
      if (m) {
        socket.destroy();
        resolve(Number(m[1]));
      }
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(0));
    socket.write(
      `GET /admin/tunnel HTTP/1.1\r\nHost: ${url.host}\r\nConnection: Upgrade\r\nUpgrade: monctl-tunnel\r\nAuthorization: Bearer ${token}\r\n\r\n`,
    );
  });
}

/** Dials `GET /admin/tunnel` and keeps the socket open once accepted; resolves with it and a promise of its close. */
export function holdTunnel(base: string, token: string): Promise<{ status: number; closed: Promise<void>; destroy(): void }> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    const closed = new Promise<void>((done) => socket.once('close', () => done()));
    let buffer = '';
    const onData = (chunk: Buffer) => {
      buffer += chunk.toString('latin1');
      const m = /^HTTP\/1\.1 (\d{3})/.exec(buffer);
      if (!m) return;
      socket.off('data', onData);
      socket.resume(); // whatever the daemon sends next is not ours to read
      resolve({ status: Number(m[1]), closed, destroy: () => socket.destroy() });
    };
    socket.on('data', onData);
    socket.on('error', () => {});
    socket.once('close', () => reject(new Error(`closed before an answer: ${buffer}`)));
    socket.write(
      `GET /admin/tunnel HTTP/1.1\r\nHost: ${url.host}\r\nConnection: Upgrade\r\nUpgrade: monctl-tunnel\r\nAuthorization: Bearer ${token}\r\n\r\n`,
    );
  });
}
