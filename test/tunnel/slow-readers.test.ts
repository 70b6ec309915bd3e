import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { edge, startTarget, startTunnel, type Tunnel, until } from './helpers.ts';
import { rssMb, startBulkTarget, stuckReaders } from './slow-readers.ts';

const MiB = 1024 * 1024;
const big = Buffer.alloc(MiB, 'x');

describe('tunnel: clients that never read their responses', () => {
  let tunnel: Tunnel;
  let bigTarget: Awaited<ReturnType<typeof startTarget>>;
  // The 16 MiB answers come from a process of their own, as a real service's would: 64 of them
  // written by this test's process competed with its own clients, and CI once saw only 44 of the
  // 64 stuck requests reach an in-process target in 25 s.
  let hugeTarget: Awaited<ReturnType<typeof startBulkTarget>>;
  let smallTarget: Awaited<ReturnType<typeof startTarget>>;
  let served = 0;

  beforeAll(async () => {
    bigTarget = await startTarget((_req, res) => {
      served++;
      res.end(big);
    });
    hugeTarget = await startBulkTarget(16 * MiB);
    smallTarget = await startTarget((_req, res) => res.end('ok'));
    tunnel = await startTunnel();
    await tunnel.httpRoute('big', bigTarget.url, 'big.test');
    await tunnel.httpRoute('huge', hugeTarget.url, 'huge.test');
    await tunnel.httpRoute('small', smallTarget.url, 'small.test');
  });
  // A failure here has been seen only under load: say what the daemon and the agent logged.
  afterEach(({ task }) => {
    if (task.result?.state !== 'fail') return;
    const notable = (logs: Array<Record<string, unknown>>) =>
      logs.filter((l) => Number(l.level ?? 0) >= 40 || /agent|tunnel|session/i.test(String(l.msg ?? ''))).slice(-40);
    console.error('daemon log:', JSON.stringify(notable(tunnel.daemon.logs), null, 1));
    console.error('agent log:', JSON.stringify(notable(tunnel.agent.logs), null, 1), tunnel.agent.stderr().slice(-2000));
  });
  afterAll(async () => {
    await tunnel?.close();
    await bigTarget?.close();
    hugeTarget?.close();
    await smallTarget?.close();
  });

  it('do not stall another route of the same agent, and the daemon stays small', async () => {
    const { daemon } = tunnel;
    let peak = 0;
    const sampler = setInterval(() => {
      peak = Math.max(peak, rssMb(daemon.proc.pid!));
    }, 100);
    const attack = await stuckReaders(daemon.edgeUrl, 'GET /big HTTP/1.1\r\nHost: big.test\r\n\r\n', 1000);
    try {
      // Every one of them reached the target: their responses are on their way, and stuck.
      const attacked = Date.now();
      await until(() => {
        if (Date.now() - attacked > 30_000) throw new Error(`only ${served} of 1,000 stuck requests reached the target in 30 s`);
        return served >= 1000;
      });
      await new Promise((r) => setTimeout(r, 2000));
      const times: number[] = [];
      for (let i = 0; i < 50; i++) {
        const started = performance.now();
        const res = await edge(daemon.edgeUrl, 'small.test', 'GET', '/');
        times.push(performance.now() - started);
        expect(res.status).toBe(200);
        expect(res.text).toBe('ok');
      }
      times.sort((a, b) => a - b);
      const p99 = times[Math.ceil(times.length * 0.99) - 1];
      console.log(
        `second route under 1,000 stuck readers: p50 ${times[24].toFixed(1)} ms, p99 ${p99.toFixed(1)} ms; daemon peak RSS ${peak.toFixed(0)} MB`,
      );
      // No timed assertion (the machines are noisy; the figure is bench/tunnel.ts --slow-readers's):
      // before the fix every one of these stalled 3 s and then failed, which the checks above and the
      // test's timeout catch.
    } finally {
      clearInterval(sampler);
      attack.close();
    }
    expect(peak).toBeLessThan(400);
  }, 60_000);

  it('that hold more than the connection window do not stall the other routes', async () => {
    // Loopback sockets absorb a few MB each: 64 stuck 16 MiB responses leave far more than the
    // 32 MiB connection window unread in the daemon, which stalled every route before issue 14.
    const { daemon } = tunnel;
    const started = Date.now();
    const attack = await stuckReaders(daemon.edgeUrl, 'GET /huge HTTP/1.1\r\nHost: huge.test\r\n\r\n', 64);
    try {
      // Each phase fails on its own deadline, saying where it stopped: CI once saw this test time out at
      // 60 s, and the timeout did not say which phase.
      await until(async () => {
        const hugeServed = await hugeTarget.served();
        if (Date.now() - started > 25_000) throw new Error(`only ${hugeServed} of 64 stuck requests reached the target in 25 s`);
        return hugeServed >= 64;
      });
      await new Promise((r) => setTimeout(r, 2000));
      for (let i = 0; i < 10; i++) {
        const sent = Date.now();
        const res = await Promise.race([
          edge(daemon.edgeUrl, 'small.test', 'GET', '/'),
          new Promise<never>((_, reject) =>
            setTimeout(() => reject(new Error(`request ${i + 1} of 10 to the other route got no answer in 10 s`)), 10_000).unref(),
          ),
        ]);
        expect(res.text).toBe('ok');
        if (Date.now() - sent > 2000) console.log(`request ${i + 1} to the other route took ${Date.now() - sent} ms`);
      }
    } finally {
      attack.close();
    }
  }, 60_000);
});
