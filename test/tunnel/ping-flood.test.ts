import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { FRAME, frameHeader } from '../../src/tunnel/mux/frame.ts';
import { TUNNEL_PATH, TUNNEL_UPGRADE } from '../../src/tunnel/protocol.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { until } from './helpers.ts';
import { rssMb } from './slow-readers.ts';

/** Dials the tunnel endpoint as `monctl agent` does; resolves once the daemon answered 101, with the raw socket. */
export function dialTunnel(daemon: TestDaemon, token: string): Promise<net.Socket> {
  const url = new URL(daemon.url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(url.port), url.hostname);
    socket.once('error', reject);
    socket.write(
      `GET ${TUNNEL_PATH} HTTP/1.1\r\nHost: ${url.host}\r\nConnection: Upgrade\r\nUpgrade: ${TUNNEL_UPGRADE}\r\n` +
        `Authorization: Bearer ${token}\r\n\r\n`,
    );
    let head = '';
    const onData = (c: Buffer) => {
      head += c.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      socket.off('data', onData);
      socket.pause(); // from here on nothing is read
      if (!head.startsWith('HTTP/1.1 101')) return reject(new Error(head));
      resolve(socket);
    };
    socket.on('data', onData);
  });
}

let daemon: TestDaemon | undefined;
afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
});

describe('tunnel: a PING flood from an agent', () => {
  it('is dropped, the daemon stays small and keeps serving', async () => {
    daemon = await startDaemon();
    const admin = daemon.admin;
    const agent = await admin.call(operations.createAgent, { body: { name: 'flooder' } });
    const { token } = await admin.call(operations.rotateAgentToken, { params: { id: agent.id } });
    const peer = await dialTunnel(daemon, token);
    await until(async () => (await admin.call(operations.getAgent, { params: { id: agent.id } })).status === 'CONNECTED');

    // PINGs as fast as the socket takes them; the answers are never read.
    let closed = false;
    peer.on('error', () => {});
    peer.once('close', () => {
      closed = true;
    });
    const ping = Buffer.concat([frameHeader(FRAME.PING, 0, 8), Buffer.alloc(8)]);
    const burst = Buffer.concat(Array.from({ length: 4096 }, () => ping));
    const flood = () => {
      while (!closed && peer.write(burst));
    };
    peer.on('drain', flood);
    flood();

    let peak = 0;
    const sampler = setInterval(() => {
      peak = Math.max(peak, rssMb(daemon!.proc.pid!));
    }, 50);
    try {
      // Meanwhile the daemon answers other clients.
      while (!closed && peak < 300) {
        expect((await admin.call(operations.getAgent, { params: { id: agent.id } })).name).toBe('flooder');
        await new Promise((r) => setTimeout(r, 50));
      }
      await until(async () => (await admin.call(operations.getAgent, { params: { id: agent.id } })).status === 'DISCONNECTED');
    } finally {
      clearInterval(sampler);
      peer.destroy();
    }
    expect(peak).toBeLessThan(300);
    expect(daemon.logs.some((l) => l.msg === 'tunnel: agent session dropped' && /ping flood/.test(String(l.reason)))).toBe(true);
    const metrics = await admin.raw('GET', '/actuator/prometheus');
    expect(metrics.text).toMatch(/monctl_tunnel_sessions_dropped_total\{reason="protocol"\} 1/);
  }, 20_000);
});
