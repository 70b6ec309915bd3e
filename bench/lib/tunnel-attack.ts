import { stuckReaders } from '../../test/tunnel/slow-readers.ts';
import { fmt } from './load.ts';
import { treeCpuMs, treeMemoryMb } from './procs.ts';
import type { BenchPath } from './tunnel-peers.ts';
import { type WrkFigures, wrk } from './wrk.ts';

const STUCK = 1000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The slow-reader attack of the hardening issue: 1,000 clients each ask one route for 1 MiB and
 * never read; another route of the same tunnel is measured (wrk, 8 connections) against the same
 * measurement just before, twice: while the 1,000 MiB go through the tunnel (the other route's
 * answers queue behind them on the one connection), and once they sit in the clients' buffers
 * (the path's processes are idle again: the attack's steady state). `served()` says how many
 * 1 MiB answers the target has sent.
 */
export async function slowReaderAttack(path: BenchPath, attackHost: string, seconds: number, served: () => Promise<number>): Promise<string[]> {
  const before = wrk(`${path.url}/`, path.host, 8, seconds);
  const start = await served();
  const attack = await stuckReaders(path.url, `GET /mib HTTP/1.1\r\nHost: ${attackHost}\r\n\r\n`, STUCK);
  try {
    const deadline = Date.now() + 20_000;
    while ((await served()) - start < STUCK && Date.now() < deadline) await sleep(100);
    const reached = (await served()) - start;
    const pushed = Date.now();
    const during = wrk(`${path.url}/`, path.host, 8, seconds);
    // Settled: the path's processes use under a tenth of a core over half a second (30 s at most).
    const cpu = () => Object.values(path.procs).reduce((sum, pids) => sum + treeCpuMs(pids()), 0);
    for (let last = cpu(), waited = 0; waited < 30_000; waited += 500) {
      await sleep(500);
      const now = cpu();
      if (now - last < 50) break;
      last = now;
    }
    const settledAfter = (Date.now() - pushed) / 1000;
    const settled = wrk(`${path.url}/`, path.host, 8, seconds);
    const rss = Object.entries(path.procs).map(([k, pids]) => `${k} ${fmt(treeMemoryMb(pids()).rss)} MB`).join(', ');
    const show = (f: WrkFigures) => (f.requests > 0
      ? `p50/p99 ${fmt(f.p50, 2)}/${fmt(f.p99, 2)} ms, ${fmt(f.rps, 0)} req/s, ${f.errors} errors`
      : `no request answered in ${seconds} s`);
    return [
      `${path.name}: ${reached} stuck answers sent; without the attack ${show(before)}`,
      `  while they go through: ${show(during)}`,
      `  once delivered (idle again after ${fmt(settledAfter)} s): ${show(settled)}; RSS: ${rss}`
        + `; p99 ≤ 100 ms: ${settled.requests > 0 && settled.p99 <= 100 && settled.errors === 0 ? 'PASS' : 'MISS'}`,
    ];
  } finally {
    attack.close();
    await sleep(1000);
  }
}
