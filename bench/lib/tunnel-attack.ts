import { readFileSync } from 'node:fs';
import { stuckReaders } from '../../test/tunnel/slow-readers.ts';
import { fmt } from './load.ts';
import { treeCpuMs, treeMemoryMb } from './procs.ts';
import type { BenchPath } from './tunnel-peers.ts';
import { type WrkFigures, wrk } from './wrk.ts';

const STUCK = 1000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Bytes the path's processes have read through syscalls (/proc/<pid>/io): shows whether the stuck answers were still going through. */
const readMb = (path: BenchPath) =>
  Object.values(path.procs)
    .flatMap((pids) => pids())
    .reduce((sum, pid) => {
      try {
        return sum + Number(/rchar:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))?.[1] ?? 0) / 1048576;
      } catch {
        return sum; // gone
      }
    }, 0);

/**
 * The slow-reader attack of the hardening issue: 1,000 clients each ask one route for 1 MiB and
 * never read; another route of the same tunnel is measured (wrk, 8 connections) against the same
 * measurement just before, twice: while the 1,000 MiB go through the tunnel (issue 25: the
 * requests that matter; judged against issue 14's p99 ≤ 100 ms), and once they sit in the clients'
 * buffers (the path's processes are idle again: the attack's steady state). The MB the path's
 * processes read during the first show that the stuck answers were still going through, and the
 * count of stuck clients still connected that none was shed meanwhile. `served()` says how many
 * 1 MiB answers the target has sent.
 */
export async function slowReaderAttack(
  path: BenchPath,
  attackHost: string,
  seconds: number,
  served: () => Promise<number>,
): Promise<string[]> {
  const before = wrk(`${path.url}/`, path.host, 8, seconds);
  const start = await served();
  const attack = await stuckReaders(path.url, `GET /mib HTTP/1.1\r\nHost: ${attackHost}\r\n\r\n`, STUCK);
  try {
    const deadline = Date.now() + 20_000;
    while ((await served()) - start < STUCK && Date.now() < deadline) await sleep(100);
    const reached = (await served()) - start;
    const pushed = Date.now();
    const readBefore = readMb(path);
    const during = wrk(`${path.url}/`, path.host, 8, seconds);
    const readDuring = readMb(path) - readBefore;
    const stuck = attack.sockets.filter((s) => !s.destroyed).length;
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
    const rss = Object.entries(path.procs)
      .map(([k, pids]) => `${k} ${fmt(treeMemoryMb(pids()).rss)} MB`)
      .join(', ');
    const show = (f: WrkFigures) =>
      f.requests > 0
        ? `p50/p99 ${fmt(f.p50, 2)}/${fmt(f.p99, 2)} ms, ${fmt(f.rps, 0)} req/s, ${f.errors} errors`
        : `no request answered in ${seconds} s`;
    const verdict = (f: WrkFigures) => `p99 ≤ 100 ms: ${f.requests > 0 && f.p99 <= 100 && f.errors === 0 ? 'PASS' : 'MISS'}`;
    return [
      `${path.name}: ${reached} stuck answers sent; without the attack ${show(before)}`,
      `  while they go through (${fmt(readDuring, 0)} MB read by the path meanwhile, ${stuck} stuck clients connected): ${show(during)}; ${verdict(during)}`,
      `  once delivered (idle again after ${fmt(settledAfter)} s): ${show(settled)}; RSS: ${rss}; ${verdict(settled)}`,
    ];
  } finally {
    attack.close();
    await sleep(1000);
  }
}
