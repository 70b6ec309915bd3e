import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { edge, startTarget, startTunnel, type Tunnel, until } from './helpers.ts';

const huge = Buffer.alloc(16 * 1024 * 1024, 'x');

describe('edge: a client reading a little every 2 s', () => {
  let tunnel: Tunnel;
  let target: Awaited<ReturnType<typeof startTarget>>;

  beforeAll(async () => {
    target = await startTarget((_req, res) => res.end(huge));
    // A short window so the test is quick. Node cannot take less than what the kernel holds (up to
    // 64 KiB) per read, so the client below takes ~32 KiB/s from the kernel: the floor is set above that.
    tunnel = await startTunnel([], ['--slow-reader-window', '3s', '--slow-reader-floor', String(128 * 1024)]);
    await tunnel.httpRoute('huge', target.url, 'huge.test');
  });
  afterAll(async () => {
    await tunnel?.close();
    await target?.close();
  });

  it('is disconnected, and a client that reads is not', async () => {
    const { port, hostname } = new URL(tunnel.daemon.edgeUrl);
    const slow = net.connect(Number(port), hostname);
    slow.pause();
    slow.on('error', () => {});
    let closed = false;
    slow.once('close', () => {
      closed = true;
    });
    slow.write('GET / HTTP/1.1\r\nHost: huge.test\r\n\r\n');
    let taken = 0;
    const trickle = setInterval(() => {
      taken += slow.read(64)?.length ?? 0;
    }, 2000);
    slow.on('data', (c: Buffer) => {
      taken += c.length;
    });
    slow.pause();
    try {
      // The test's timeout bounds the wait: without shedding it stays connected for as long as it likes.
      // The daemon's side is watched: the client still has the kernel's buffers to read before it sees the end.
      await until(
        async () => /monctl_http_slow_readers_shed_total 1/.test((await tunnel.daemon.admin.raw('GET', '/actuator/prometheus')).text),
        500,
      );
      // What is left is what the kernels hold: the client reaches the end once it reads on.
      slow.resume();
      await until(() => closed);
    } finally {
      clearInterval(trickle);
      slow.destroy();
    }
    expect(taken).toBeLessThan(huge.length);
    // A client that reads at full speed gets the whole 16 MiB, even though it takes longer than the window.
    const whole = await edge(tunnel.daemon.edgeUrl, 'huge.test', 'GET', '/');
    expect(whole.body.length).toBe(huge.length);
  }, 60_000);
});
