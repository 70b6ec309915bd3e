/**
 * `npm run bench:probes -- --location agent` (issue 19): N HTTP resources
 * (default 5,000) checked through one agent and N more checked by the daemon
 * itself, at the same interval (default 60 s), in the same run against the
 * same local targets. Once every resource has had its first check, it measures
 * whole intervals and prints, per location, the checks done versus due and the
 * start lag (p50, p99; an agent's lag includes the wait in its queue), then
 * the agent's CPU and RSS and the daemon's.
 *
 * Flags: --resources N (per location), --interval S, --intervals K (measured), --targets T,
 * --agent sea|mjs|ts: the agent as shipped (`dist/monctl-agent`, the default; built first),
 * `node dist/agent.mjs` as the README runs it, or `monctl agent` from the sources;
 * --page-cache cold|warm: the single executable's pages dropped from the page cache before it
 * starts (the default, as after a reboot) or left as the build wrote them (see dropPageCache).
 * Short run: `npm run bench:probes -- --location agent --resources 1000 --interval 10 --intervals 2`.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { closeSync, fsyncSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { ROOT, startDaemon, type TestDaemon } from '../test/helpers/daemon.ts';
import { parseLagBuckets, quantile } from './lib/lag.ts';
import { flag, fmt } from './lib/load.ts';
import { metricSum, procStat } from './lib/measure.ts';

/** Child mode: T HTTP servers answering 200; `GET /__stats` tells requests and distinct paths per first path segment. */
export async function serveTargets(count: number): Promise<void> {
  const total: Record<string, number> = {};
  const seen: Record<string, Set<string>> = {};
  const ports: number[] = [];
  for (let i = 0; i < count; i++) {
    const server = createServer((req, res) => {
      if (req.url === '/__stats') {
        return void res.end(
          JSON.stringify(Object.fromEntries(Object.keys(total).map((k) => [k, { total: total[k], distinct: seen[k].size }]))),
        );
      }
      const set = req.url!.split('/')[1];
      total[set] = (total[set] ?? 0) + 1;
      (seen[set] ??= new Set()).add(req.url!);
      res.end('ok');
    });
    server.keepAliveTimeout = 65_000;
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    ports.push((server.address() as { port: number }).port);
  }
  process.stdout.write(`${JSON.stringify({ ports })}\n`);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const LOCATIONS = { agent: 'bench-agent', daemon: 'daemon' } as const;
type Stats = Record<string, { total: number; distinct: number }>;

async function adminCall(d: TestDaemon, method: string, path: string, body?: unknown, dispatcher?: Agent): Promise<any> {
  const res = await request(`${d.url}${path}`, {
    method,
    dispatcher,
    headers: { authorization: `Bearer ${d.adminKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`${method} ${path}: ${res.statusCode} ${text}`);
  return JSON.parse(text);
}

/**
 * Drops `file`'s pages from the page cache (written to disk first), so that the agent's
 * executable is read from disk as after a reboot. The build has just written it, and a
 * file written in large chunks sits in the page cache in large folios (512 KB on ext4
 * under Linux 6.18) which a page fault maps whole: each page of the executable the agent
 * touches then counts 512 KB in its RssFile instead of the 64 KB of fault-around.
 * `dd iflag=nocache count=0` is GNU dd's documented way to drop a file's cache.
 */
function dropPageCache(file: string): void {
  const fd = openSync(file, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  const dropped = spawnSync('dd', [`if=${file}`, 'iflag=nocache', 'count=0', 'status=none'], { encoding: 'utf8' });
  if (dropped.status !== 0) throw new Error(`dd iflag=nocache failed: ${dropped.stderr}`);
}

/** The agent command line for `--agent`, building the agent first when it is not run from the sources. */
function agentCommand(kind: string, pageCache: string): { command: string; args: string[] } {
  if (kind === 'ts') return { command: join(ROOT, 'bin/monctl'), args: ['agent'] };
  const built = spawnSync('npm', ['run', '--silent', 'build:agent'], { cwd: ROOT, encoding: 'utf8' });
  if (built.status !== 0) throw new Error(`build:agent failed: ${built.stderr}`);
  if (kind === 'mjs')
    return {
      command: join(ROOT, 'node_modules/.bin/node'),
      args: ['--max-semi-space-size=1', '--no-maglev', join(ROOT, 'dist/agent.mjs')],
    };
  if (kind === 'sea') {
    const executable = join(ROOT, 'dist/monctl-agent');
    if (pageCache === 'cold') dropPageCache(executable);
    return { command: executable, args: [] };
  }
  throw new Error(`--agent must be sea, mjs or ts, not ${kind}`);
}

export async function benchAgentLocation(): Promise<void> {
  const at = process.argv.indexOf('--agent');
  const kind = at > 0 ? process.argv[at + 1] : 'sea';
  const pageCacheAt = process.argv.indexOf('--page-cache');
  const pageCache = pageCacheAt > 0 ? process.argv[pageCacheAt + 1] : 'cold';
  if (pageCache !== 'cold' && pageCache !== 'warm') throw new Error(`--page-cache must be cold or warm, not ${pageCache}`);
  const how = agentCommand(kind, pageCache);
  const n = flag('resources', 5_000);
  const interval = flag('interval', 60);
  const intervals = flag('intervals', 2);
  const targetCount = flag('targets', 8);
  const children: ChildProcess[] = [];
  process.on('exit', () => children.forEach((c) => c.kill('SIGKILL')));
  const targets = spawn(
    process.execPath,
    ['--disable-warning=ExperimentalWarning', import.meta.filename, '--serve-targets', String(targetCount)],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  children.push(targets);
  const { ports } = JSON.parse(await new Promise<string>((resolve) => targets.stdout!.once('data', (d) => resolve(String(d)))));
  const url = (set: string, i: number) => `http://127.0.0.1:${ports[i % ports.length]}/${set}/${i}`;
  const stats = async (): Promise<Stats> => JSON.parse(await (await request(`http://127.0.0.1:${ports[0]}/__stats`)).body.text());

  const dir = mkdtempSync(join(tmpdir(), 'monctl-bench-agent-'));
  const d = await startDaemon({ env: { MONCTL_CHECK_RESPONSES: '0' }, dataDir: join(dir, 'data') });
  children.push(d.proc);
  let agent: ChildProcess | undefined;
  console.log(
    `probes bench by location: ${n} HTTP resources through one agent (${kind}: ${[how.command, ...how.args].map((a) => a.replace(`${ROOT}/`, '')).join(' ')}) and ${n} through the daemon, every ${interval} s, on ${ports.length} local targets; measuring ${intervals} interval(s)${kind === 'sea' ? `; its executable's page cache ${pageCache}` : ''}`,
  );
  try {
    const { id } = await adminCall(d, 'POST', '/admin/api/agents', { name: LOCATIONS.agent });
    const { token } = await adminCall(d, 'POST', `/admin/api/agents/${id}/token`);
    writeFileSync(join(dir, 'token'), token, { mode: 0o600 });
    agent = spawn(how.command, [...how.args, '--server', d.url, '--token-file', join(dir, 'token'), '--log-level', 'warn'], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    children.push(agent);
    while ((await adminCall(d, 'GET', `/admin/api/agents/${id}`)).status !== 'CONNECTED') await sleep(100);

    const api = new Agent({ connections: 8 });
    const created = Date.now();
    const jobs = [...Array(n).keys()].flatMap(
      (i) =>
        [
          ['a', i],
          ['d', i],
        ] as const,
    );
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < jobs.length) {
          const [set, i] = jobs[next++];
          await adminCall(
            d,
            'POST',
            '/api/resources',
            {
              name: `bench-${set}-${i}`,
              resourceType: 'HTTP',
              target: url(set, i),
              intervalSeconds: interval,
              locations: [set === 'a' ? LOCATIONS.agent : LOCATIONS.daemon],
            },
            api,
          );
        }
      }),
    );
    await api.close();
    console.log(`created ${2 * n} resources through the API in ${((Date.now() - created) / 1000).toFixed(1)} s`);
    // A burst past the agent's queue at creation is skipped (and counted); the next interval catches up.
    for (;;) {
      const s = await stats();
      if ((s.a?.distinct ?? 0) >= n && (s.d?.distinct ?? 0) >= n) break;
      await sleep(500);
    }
    console.log(`every resource checked once after ${((Date.now() - created) / 1000).toFixed(1)} s`);

    const metrics = async () =>
      (await request(`${d.url}/actuator/prometheus`, { headers: { authorization: `Bearer ${d.adminKey}` } })).body.text();
    const m0 = await metrics();
    const before = { stats: await stats(), agent: procStat(agent.pid!), daemon: procStat(d.proc.pid!), at: Date.now() };
    let maxAgentRss = before.agent.rssMb;
    let maxDaemonRss = before.daemon.rssMb;
    const windowMs = intervals * interval * 1000;
    const perInterval: string[] = [];
    while (Date.now() - before.at < windowMs) {
      await sleep(Math.min(1000, windowMs - (Date.now() - before.at)));
      const rss = procStat(agent.pid!).rssMb;
      maxAgentRss = Math.max(maxAgentRss, rss);
      maxDaemonRss = Math.max(maxDaemonRss, procStat(d.proc.pid!).rssMb);
      if (Math.floor((Date.now() - before.at) / (interval * 1000)) > perInterval.length) perInterval.push(fmt(rss));
    }
    const m1 = await metrics();
    const after = { stats: await stats(), agent: procStat(agent.pid!), daemon: procStat(d.proc.pid!), at: Date.now() };
    const seconds = (after.at - before.at) / 1000;
    const due = n * intervals;
    const skipped =
      metricSum(m1, `monctl_agent_checks_skipped_total{agent="${LOCATIONS.agent}"}`) -
      metricSum(m0, `monctl_agent_checks_skipped_total{agent="${LOCATIONS.agent}"}`);
    for (const [set, location] of [
      ['a', LOCATIONS.agent],
      ['d', LOCATIONS.daemon],
    ] as const) {
      const done = after.stats[set].total - before.stats[set].total;
      const lag0 = parseLagBuckets(m0, location);
      const lag1 = parseLagBuckets(m1, location);
      const label = set === 'a' ? 'through the agent' : 'by the daemon   ';
      console.log(
        `${label}: checks done vs due ${done} / ${due} (${fmt((100 * done) / due)} %), start lag p50 ${fmt(quantile(0.5, lag0, lag1) * 1000)} ms, p99 ${fmt(quantile(0.99, lag0, lag1) * 1000)} ms`,
      );
    }
    console.log(`skipped (agent queue full):  ${skipped} in the window`);
    const agentCpu = after.agent.cpuSeconds - before.agent.cpuSeconds;
    const daemonCpu = after.daemon.cpuSeconds - before.daemon.cpuSeconds;
    console.log(
      `agent CPU:  ${fmt(agentCpu, 2)} s over ${fmt(seconds)} s (${fmt((100 * agentCpu) / seconds)} % of one core, ${fmt((1000 * agentCpu) / Math.max(1, due), 3)} ms per check)`,
    );
    console.log(
      `agent RSS:  ${fmt(after.agent.rssMb)} MB at the end, ${fmt(maxAgentRss)} MB max sampled each second, ${fmt(after.agent.peakMb)} MB peak (VmHWM) since it started`,
    );
    console.log(
      `agent RSS:  ${fmt(after.agent.anonMb)} MB its own memory (RssAnon) + ${fmt(after.agent.fileMb)} MB of its executable and libraries mapped in (RssFile) at the end`,
    );
    console.log(
      `agent RSS:  ${fmt(before.agent.rssMb)} MB when the window began, then ${perInterval.join(', ')} MB at the end of each interval`,
    );
    console.log(
      `daemon CPU: ${fmt(daemonCpu, 2)} s over ${fmt(seconds)} s (${fmt((100 * daemonCpu) / seconds)} % of one core, both sets of checks)`,
    );
    console.log(`daemon RSS: ${fmt(after.daemon.rssMb)} MB at the end, ${fmt(maxDaemonRss)} MB max sampled each second`);
  } finally {
    agent?.kill('SIGTERM');
    await d.stop();
    targets.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv.includes('--serve-targets')) await serveTargets(flag('serve-targets', 8));
