import { stuckReaders } from '../../test/tunnel/slow-readers.ts';
import { fmt } from './load.ts';
import { treeMemoryMb } from './procs.ts';
import type { BenchPath } from './tunnel-peers.ts';
import { wrk } from './wrk.ts';

const STUCK = 1000;

/**
 * The slow-reader attack of the hardening issue: 1,000 clients each ask one route for 1 MiB
 * and never read; meanwhile another route of the same tunnel is measured (its p99 against
 * the same measurement just before). `served()` says how many 1 MiB answers the target has
 * sent, so the measurement starts once every stuck response is on its way.
 */
export async function slowReaderAttack(path: BenchPath, attackHost: string, seconds: number, served: () => Promise<number>): Promise<string> {
  const before = wrk(`${path.url}/`, path.host, 8, seconds);
  const start = await served();
  const attack = await stuckReaders(path.url, `GET /mib HTTP/1.1\r\nHost: ${attackHost}\r\n\r\n`, STUCK);
  try {
    const deadline = Date.now() + 20_000;
    while ((await served()) - start < STUCK && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const reached = (await served()) - start;
    await new Promise((r) => setTimeout(r, 1000));
    const during = wrk(`${path.url}/`, path.host, 8, seconds);
    const rss = Object.entries(path.procs).map(([k, pids]) => `${k} ${fmt(treeMemoryMb(pids()).rss)} MB`).join(', ');
    const figures = during.requests > 0
      ? `p50/p99 ${fmt(during.p50, 2)}/${fmt(during.p99, 2)} ms, ${fmt(during.rps, 0)} req/s, ${during.errors} errors`
      : `no request answered in ${seconds} s`;
    return `${path.name.padEnd(15)} ${figures}`
      + ` (without: ${fmt(before.p50, 2)}/${fmt(before.p99, 2)} ms, ${fmt(before.rps, 0)} req/s); ${reached} stuck responses sent; RSS during: ${rss}`
      + `; p99 ≤ 100 ms: ${during.requests > 0 && during.p99 <= 100 && during.errors === 0 ? 'PASS' : 'MISS'}`;
  } finally {
    attack.close();
    await new Promise((r) => setTimeout(r, 1000));
  }
}
