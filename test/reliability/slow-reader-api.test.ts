import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { until } from '../tunnel/helpers.ts';

/**
 * Issue 14, finding 3 on the API listener: a client that asks and does not
 * read is disconnected. One API response fits in the kernel's loopback
 * buffers, so the client pipelines twenty requests for the explorer's 1.7 MB
 * script (HTTP/1.1 answers them in order) and reads nothing: the daemon then
 * has response bytes waiting that make no progress.
 */
describe('API listener: a client that does not read its responses', () => {
  let d: TestDaemon;
  beforeAll(async () => {
    d = await startDaemon({ args: ['--slow-reader-window', '3s', '--slow-reader-floor', String(128 * 1024)] });
  });
  afterAll(async () => {
    await d?.stop();
  });

  const shed = async () =>
    Number(/^monctl_http_slow_readers_shed_total (\d+)/m.exec((await d.admin.raw('GET', '/actuator/prometheus')).text)?.[1] ?? 0);

  it('is disconnected, while the API keeps answering others', async () => {
    const { port, hostname } = new URL(d.url);
    const stuck = net.connect(Number(port), hostname);
    stuck.pause();
    stuck.on('error', () => {});
    let closed = false;
    stuck.once('close', () => {
      closed = true;
    });
    stuck.write('GET /swagger-ui/swagger-ui-bundle.js HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(20));
    try {
      // The test's timeout bounds the wait: without shedding the connection stays for as long as it likes.
      await until(async () => (await shed()) >= 1, 500);
      expect((await d.admin.raw('GET', '/actuator/health')).status).toBe(200);
      stuck.resume(); // what the kernels still hold, then the end
      await until(() => closed);
    } finally {
      stuck.destroy();
    }
  }, 60_000);
});
