/**
 * API throughput: `GET /api/resources/{id}` and `GET /api/resources` on the
 * daemon against a bare node:http server that serves the same bytes, in the
 * same run. Target: the daemon does at least 0.6 of the bare server's req/s.
 *
 *   npm run bench:api -- --seconds 5 --rounds 3 --resources 100 --connections 32
 *
 * Each case runs in rounds, daemon then bare server, `seconds` each: on a
 * shared machine the CPU available drifts by tens of percent over a minute,
 * so the ratio is taken per round (both sides under the same conditions) and
 * the median round is reported.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { operations } from '../src/api/operations.ts';
import { startDaemon } from '../test/helpers/daemon.ts';
import { flag, fmt, load, type LoadResult } from './lib/load.ts';

const seconds = flag('seconds', 5);
const rounds = flag('rounds', 3);
const count = flag('resources', 100);
const connections = flag('connections', 32);

const daemon = await startDaemon({ env: { MONCTL_CHECK_RESPONSES: '0' } });
try {
  const ids: number[] = [];
  for (let i = 0; i < count; i += 20) {
    const batch = Array.from({ length: Math.min(20, count - i) }, (_, j) =>
      daemon.admin.call(operations.createResource, {
        // A target nothing listens on, checked once a day: the bench measures the API, not probes.
        body: { name: `bench-${i + j}`, resourceType: 'HTTP', target: `http://127.0.0.1:9/r${i + j}`, intervalSeconds: 86400 },
      }),
    );
    for (const created of await Promise.all(batch)) ids.push(created.id);
  }
  const cases = [
    { name: 'GET /api/resources/{id}', path: `/api/resources/${ids[Math.floor(ids.length / 2)]}` },
    { name: `GET /api/resources (${count} items)`, path: '/api/resources' },
  ];
  console.log(`# API throughput: ${rounds} rounds of ${seconds} s per side and case, ${connections} connections, anonymous caller`);
  console.log('case | monctl req/s | bare req/s | ratio (median round) | rounds | monctl p50/p99 ms | bare p50/p99 ms');
  let worst = Infinity;
  for (const c of cases) {
    const res = await fetch(daemon.url + c.path);
    const body = Buffer.from(await res.arrayBuffer());
    const contentType = res.headers.get('content-type') ?? 'application/json';
    const bare = createServer((_req, out) => {
      out.writeHead(200, { 'Content-Type': contentType, 'Content-Length': body.length }).end(body);
    });
    await new Promise<void>((r) => bare.listen(0, '127.0.0.1', r));
    const bareUrl = `http://127.0.0.1:${(bare.address() as AddressInfo).port}${c.path}`;
    const runs: Array<{ ours: LoadResult; base: LoadResult; ratio: number }> = [];
    for (let r = 0; r < rounds; r++) {
      const ours = await load(daemon.url + c.path, { seconds, connections });
      const base = await load(bareUrl, { seconds, connections });
      runs.push({ ours, base, ratio: ours.rps / base.rps });
    }
    bare.close();
    const { ours, base, ratio } = [...runs].sort((a, b) => a.ratio - b.ratio)[Math.floor(runs.length / 2)];
    const failures = runs.reduce((n, x) => n + x.ours.errors + x.ours.non2xx, 0);
    worst = Math.min(worst, ratio);
    console.log(
      `${c.name} | ${fmt(ours.rps, 0)} | ${fmt(base.rps, 0)} | ${fmt(ratio, 2)} | ${runs.map((x) => fmt(x.ratio, 2)).join(' ')} | ` +
        `${ours.p50}/${ours.p99} | ${base.p50}/${base.p99}${failures > 0 ? ` | ${failures} errors or non-2xx` : ''}`,
    );
  }
  console.log(`RESULT api: worst ratio ${fmt(worst, 2)} (target >= 0.60) ${worst >= 0.6 ? 'PASS' : 'MISS'}`);
} finally {
  await daemon.stop();
}
