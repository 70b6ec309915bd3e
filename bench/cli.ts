/**
 * CLI cold start: wall time of `monctl --version` and `monctl resources list
 * -o json` (against a local daemon with 1,000 resources), next to `node -e 0`
 * and to the request itself (the same GET from a warm process), all in the
 * same run, each a fresh process, interleaved so that load on the machine
 * hits every case alike. Target: list <= 1.5 x (node -e 0) + request.
 *
 *   npm run bench:cli -- --runs 15 --resources 1000
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { send } from '../cli/api/transport.ts';
import { operations } from '../src/api/operations.ts';
import { ROOT, startDaemon } from '../test/helpers/daemon.ts';
import { flag, fmt } from './lib/load.ts';

const runs = flag('runs', 15);
const count = flag('resources', 1000);
const node = join(ROOT, 'node_modules/.bin/node');
const monctl = join(ROOT, 'bin/monctl');

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
/** CPU time (user + sys) is also taken, through /usr/bin/time when present: wall time swings with the machine's load. */
const TIME = existsSync('/usr/bin/time') ? '/usr/bin/time' : undefined;
const cpu: Record<string, number[]> = {};
function wall(cmd: string, args: string[], env: NodeJS.ProcessEnv, label?: string): number {
  const start = process.hrtime.bigint();
  const r = spawnSync(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 << 20 });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  if (TIME && label) {
    // A separate run under time(1), so that the wall figures do not include its fork.
    const timed = spawnSync(TIME, ['-f', 'CPU %U %S', cmd, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 << 20 });
    const m = /CPU ([\d.]+) ([\d.]+)\s*$/.exec(String(timed.stderr));
    if (m) (cpu[label] ??= []).push((Number(m[1]) + Number(m[2])) * 1000);
  }
  return ms;
}

const daemon = await startDaemon({ env: { MONCTL_CHECK_RESPONSES: '0' } });
const cache = mkdtempSync(join(tmpdir(), 'monctl-bench-cache-'));
try {
  for (let i = 0; i < count; i += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, count - i) }, (_, j) =>
        daemon.admin.call(operations.createResource, {
          // Inactive: the bench measures the CLI, not 1,000 probes on a shared machine.
          body: { name: `bench-${i + j}`, resourceType: 'HTTP', target: `http://127.0.0.1:9/r${i + j}`, active: false },
        }),
      ),
    );
  }
  const env = {
    ...process.env,
    MONCTL_SERVER: daemon.url,
    MONCTL_API_KEY: daemon.adminKey,
    MONCTL_CONFIG_DIR: cache,
    NODE_COMPILE_CACHE: join(cache, 'v8'),
  };
  const headers = { authorization: `Bearer ${daemon.adminKey}`, accept: 'application/json' };
  const url = `${daemon.url}/admin/api/resources`;
  const firstList = wall(monctl, ['resources', 'list', '-o', 'json'], env); // also fills the compile cache
  // The measured command must print the whole list (piped, it passes the daemon's JSON through).
  const listed = JSON.parse(
    String(spawnSync(monctl, ['resources', 'list', '-o', 'json'], { env, maxBuffer: 64 << 20 }).stdout),
  ) as unknown[];
  if (listed.length !== count) throw new Error(`monctl resources list printed ${listed.length} resources, not ${count}`);
  const bytes = (await send('GET', url, headers)).text.length;
  const t = { node: [] as number[], version: [] as number[], list: [] as number[], request: [] as number[] };
  for (let i = 0; i < runs; i++) {
    t.node.push(wall(node, ['-e', '0'], env, 'node'));
    t.version.push(wall(monctl, ['--version'], env, 'version'));
    t.list.push(wall(monctl, ['resources', 'list', '-o', 'json'], env, 'list'));
    const start = process.hrtime.bigint();
    await send('GET', url, headers);
    t.request.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  const m = { node: median(t.node), version: median(t.version), list: median(t.list), request: median(t.request) };
  const budget = 1.5 * m.node + m.request;
  console.log(`# CLI cold start: median of ${runs} fresh processes each; ${count} resources (${(bytes / 1024).toFixed(0)} KiB of JSON)`);
  const c = (k: string) => (cpu[k] ? fmt(median(cpu[k]), 0) : '-');
  console.log(
    `load average ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')} on ${cpus().length} cores`,
  );
  console.log('case | median wall ms | x node -e 0 | median CPU ms (user+sys, 10 ms ticks)');
  console.log(`node -e 0 | ${fmt(m.node, 1)} | 1.00 | ${c('node')}`);
  console.log(`monctl --version | ${fmt(m.version, 1)} | ${fmt(m.version / m.node, 2)} | ${c('version')}`);
  console.log(`the request alone (warm process, new connection) | ${fmt(m.request, 1)} | - | -`);
  console.log(`monctl resources list -o json | ${fmt(m.list, 1)} | ${fmt(m.list / m.node, 2)} | ${c('list')}`);
  console.log(`monctl resources list -o json, first run (empty compile cache) | ${fmt(firstList, 1)} | ${fmt(firstList / m.node, 2)}`);
  console.log(
    `RESULT cli: --version ${fmt(m.version, 1)} ms (target <= ${fmt(1.5 * m.node, 1)}) ${m.version <= 1.5 * m.node ? 'PASS' : 'MISS'}; ` +
      `list ${fmt(m.list, 1)} ms (target <= 1.5 x ${fmt(m.node, 1)} + ${fmt(m.request, 1)} = ${fmt(budget, 1)}) ${m.list <= budget ? 'PASS' : 'MISS'}`,
  );
} finally {
  await daemon.stop();
  rmSync(cache, { recursive: true, force: true });
}
