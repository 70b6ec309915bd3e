/**
 * `npm run bench:probes`: N HTTP resources (default 10,000) against local
 * target servers at a fixed interval (default 60 s), measured over whole
 * intervals once every resource has had its first check. Prints checks done
 * versus due, p50/p99 start lag, the daemon's CPU and RSS, and the ratio of
 * its check throughput to a bare undici loop sending the same requests at the
 * same rate in the same run.
 *
 * Flags: --resources N, --interval S (10..86400), --intervals K (measured),
 * --baseline-seconds S, --targets T (target server ports), --profile (a V8 CPU profile of the
 * daemon over the measured intervals, its top functions printed at the end).
 * A short run: `npm run bench:probes -- --resources 1000 --interval 10 --intervals 2 --baseline-seconds 10`.
 * At scale: `npm run bench:probes -- --resources 200000` (for regular runs) and `--resources 1000000`:
 * from 100,000 resources the defaults are one measured interval of 300 s and a 120 s baseline. Bytes per resource: the RSS after the
 * measured intervals above that of the same daemon idle (started, with no resource), ÷ N.
 * `--conditions`: the targets answer a 2 KiB JSON body and each resource has three conditions (a status, a
 * JSON path, a response time); the baseline reads and `JSON.parse`s each body. Both modes print the CPU per
 * check against the baseline's CPU per request (target with conditions: at most 1.3×).
 * `--location agent`: bench/probes-agent.ts, through an agent and through the daemon in one run
 * (also `npm run bench:probes-agent`, so that `npm run bench` writes it to docs/BENCHMARKS.md).
 * `--type dns|ping|tls|udp|grpc`: bench/probe-types.ts, one protocol type against its bare baseline.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:http';
import { Agent, request } from 'undici';
import { startDaemon } from '../test/helpers/daemon.ts';
import { flag, fmt } from './lib/load.ts';
import { lagBuckets, quantile } from './lib/lag.ts';
import { maxRssOver, metricSum, procStat } from './lib/measure.ts';
import { createResources } from './lib/resources.ts';
import { profileTop } from './lib/cpu-profile.ts';

/** What the targets answer with `--conditions`: a 2 KiB JSON health document. */
const JSON_BODY = JSON.stringify({
  status: 'UP',
  checks: Array.from({ length: 24 }, (_, i) => ({ name: `dependency-${i}`, status: 'UP', ms: i })),
})
  .padEnd(2048, ' ')
  .slice(0, 2048);
/** The three conditions of each resource with `--conditions`. */
const CONDITIONS = ['[STATUS] == 200', '[BODY].status == UP', '[RESPONSE_TIME] < 5000'];

/** Child mode: T plain HTTP servers answering 200; `GET /__stats` on any tells requests and distinct paths so far. */
async function serveTargets(count: number, json: boolean): Promise<void> {
  let total = 0;
  const seen = new Set<string>();
  const ports: number[] = [];
  for (let i = 0; i < count; i++) {
    const server = createServer((req, res) => {
      if (req.url === '/__stats') return void res.end(JSON.stringify({ total, distinct: seen.size }));
      total++;
      seen.add(req.url!);
      if (json) res.writeHead(200, { 'content-type': 'application/json' });
      res.end(json ? JSON_BODY : 'ok');
    });
    server.keepAliveTimeout = 65_000;
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    ports.push((server.address() as { port: number }).port);
  }
  process.stdout.write(`${JSON.stringify({ ports })}\n`);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main(): Promise<void> {
  const n = flag('resources', 10_000);
  const large = n >= 100_000;
  const interval = flag('interval', large ? 300 : 60);
  const intervals = flag('intervals', large ? 1 : 2);
  const baselineSeconds = flag('baseline-seconds', Math.min(interval, 120));
  const targetCount = flag('targets', 8);
  const withConditions = process.argv.includes('--conditions');
  const children: ChildProcess[] = [];
  const targets = spawn(
    process.execPath,
    [
      '--disable-warning=ExperimentalWarning',
      import.meta.filename,
      '--serve-targets',
      String(targetCount),
      ...(withConditions ? ['--json'] : []),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  children.push(targets);
  process.on('exit', () => children.forEach((c) => c.kill('SIGKILL')));
  const { ports } = JSON.parse(await new Promise<string>((resolve) => targets.stdout!.once('data', (d) => resolve(String(d)))));
  const pathOf = (i: number) => `http://127.0.0.1:${ports[i % ports.length]}/r/${i}`;
  const stats = async () =>
    JSON.parse(await (await request(`http://127.0.0.1:${ports[0]}/__stats`)).body.text()) as { total: number; distinct: number };

  const dataDir = mkdtempSync(join(tmpdir(), 'monctl-bench-probes-'));
  const env = { MONCTL_CHECK_RESPONSES: '0' };
  let daemon = await startDaemon({ env, dataDir: join(dataDir, 'data') });
  children.push(daemon.proc);
  await sleep(2000);
  const idle = procStat(daemon.proc.pid!);
  const load = () =>
    loadavg()
      .map((l) => l.toFixed(2))
      .join(' ');
  const what = withConditions ? `, each with ${CONDITIONS.length} conditions against a 2 KiB JSON body (${CONDITIONS.join(', ')})` : '';
  console.log(
    `probes bench: ${n} HTTP resources every ${interval} s on ${ports.length} local targets${what}, measuring ${intervals} interval(s)`,
  );
  console.log(`CPU: ${cpus()[0]?.model ?? 'unknown'} (${cpus().length} cores); load average ${load()} at the start`);
  console.log(`idle daemon (no resource): RSS ${fmt(idle.rssMb)} MB`);
  try {
    const createdIn = await createResources(daemon.url, daemon.adminKey, n, (i) => ({
      name: `bench-${i}`,
      resourceType: 'HTTP',
      target: pathOf(i),
      intervalSeconds: interval,
      ...(withConditions ? { conditions: CONDITIONS } : {}),
    }));
    console.log(`created ${n} resources through the API in ${createdIn.toFixed(1)} s`);
    while ((await stats()).distinct < n) await sleep(200);
    // Creating 10,000 resources through the API leaves V8's heap grown; a restart shows the
    // steady state of a daemon that watches them (and that a restart resumes without a burst).
    const creation = procStat(daemon.proc.pid!);
    console.log(
      `every resource checked once; daemon RSS ${fmt(creation.rssMb)} MB (peak ${fmt(creation.peakMb)} MB) after creation; restarting it`,
    );
    await daemon.stop();
    const restart = Date.now();
    const profDir = process.argv.includes('--profile') ? mkdtempSync(join(tmpdir(), 'monctl-bench-probes-prof-')) : undefined;
    const profEnv: Record<string, string> = profDir ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${profDir}` } : {};
    // The "listening" line comes once the schedule is loaded: 14–25 s at a million resources.
    daemon = await startDaemon({ env: { ...env, ...profEnv }, dataDir: join(dataDir, 'data'), startTimeoutMs: 300_000 });
    children.push(daemon.proc);
    console.log(`restarted in ${((Date.now() - restart) / 1000).toFixed(1)} s`);
    // Every resource has been checked once: from now on each is due exactly once per interval.
    const before = {
      stats: await stats(),
      lag: await lagBuckets(daemon.url, daemon.adminKey),
      proc: procStat(daemon.proc.pid!),
      at: Date.now(),
    };
    const maxRss = await maxRssOver(daemon.proc.pid!, before.at, intervals * interval * 1000, before.proc.rssMb);
    const after = {
      stats: await stats(),
      lag: await lagBuckets(daemon.url, daemon.adminKey),
      proc: procStat(daemon.proc.pid!),
      at: Date.now(),
    };
    const done = after.stats.total - before.stats.total;
    const due = n * intervals;
    const seconds = (after.at - before.at) / 1000;
    const daemonRate = done / seconds;
    const daemonCpu = after.proc.cpuSeconds - before.proc.cpuSeconds;
    const loadAfter = load();
    // Where the RSS goes: V8's heap (live and not yet collected), its committed size, and memory outside it (typed arrays, SQLite's is not counted).
    const text = await (
      await request(`${daemon.url}/actuator/prometheus`, { headers: { authorization: `Bearer ${daemon.adminKey}` } })
    ).body.text();
    const heap = ['nodejs_heap_size_used_bytes', 'nodejs_heap_size_total_bytes', 'nodejs_external_memory_bytes'].map(
      (name) => metricSum(text, name) / 2 ** 20,
    );
    await daemon.stop();
    if (profDir) for (const line of profileTop(profDir, 40)) console.log(line);

    // Baseline: a bare undici loop sending the same requests at the same rate (each path once per interval, evenly phased).
    const agent = new Agent({ keepAliveTimeout: 30_000 });
    const start = Date.now();
    const cpu0 = process.cpuUsage();
    let sent = 0;
    let ok = 0;
    const inflight = new Set<Promise<void>>();
    const slot = (interval * 1000) / n;
    while (Date.now() - start < baselineSeconds * 1000) {
      const dueNow = Math.floor((Date.now() - start) / slot);
      while (sent <= dueNow && Date.now() - start < baselineSeconds * 1000) {
        const i = sent++ % n;
        const p = request(pathOf(i), { dispatcher: agent })
          .then(
            async (res) => {
              if (withConditions) JSON.parse(await res.body.text());
              else await res.body.dump();
              if (res.statusCode === 200) ok++;
            },
            () => undefined,
          )
          .finally(() => inflight.delete(p));
        inflight.add(p);
      }
      await sleep(5);
    }
    await Promise.all(inflight);
    const baseCpu = process.cpuUsage(cpu0);
    const baseSeconds = (Date.now() - start) / 1000;
    const baseRate = ok / baseSeconds;
    await agent.close();

    const p50 = quantile(0.5, before.lag, after.lag);
    const p99 = quantile(0.99, before.lag, after.lag);
    console.log(`checks done vs due:      ${done} / ${due} (${fmt((100 * done) / due)} %) over ${fmt(seconds)} s`);
    console.log(`start lag:               p50 ${fmt(p50 * 1000)} ms, p99 ${fmt(p99 * 1000)} ms (from the lag histogram)`);
    console.log(
      `daemon CPU:              ${fmt(daemonCpu, 2)} s over ${fmt(seconds)} s (${fmt((100 * daemonCpu) / seconds)} % of one core, ${fmt((1000 * daemonCpu) / Math.max(1, done), 3)} ms per check)`,
    );
    console.log(
      `daemon RSS:              ${fmt(after.proc.rssMb)} MB at the end, ${fmt(maxRss)} MB max sampled each second, ${fmt(after.proc.peakMb)} MB peak (VmHWM) since the restart`,
    );
    const perResource = ((after.proc.rssMb - idle.rssMb) * 2 ** 20) / n;
    console.log(`bytes per resource:      ${fmt(perResource, 0)} (RSS at the end above the idle daemon's ${fmt(idle.rssMb)} MB, ÷ ${n})`);
    console.log(
      `daemon memory:           RSS ${fmt(after.proc.anonMb)} MB anonymous + ${fmt(after.proc.fileMb)} MB file-backed; V8 heap ${fmt(heap[0])} MB used of ${fmt(heap[1])} MB, ${fmt(heap[2])} MB external`,
    );
    console.log(`load average:            ${loadAfter} at the end of the measured intervals`);
    console.log(`daemon throughput:       ${fmt(daemonRate, 2)} checks/s (schedule: ${fmt(n / interval, 2)}/s)`);
    const baseCpuSeconds = (baseCpu.user + baseCpu.system) / 1e6;
    console.log(
      `bare undici loop:        ${fmt(baseRate, 2)} requests/s over ${fmt(baseSeconds)} s, ${fmt(baseCpuSeconds, 2)} s CPU (${fmt((1000 * baseCpuSeconds) / Math.max(1, ok), 3)} ms per request)`,
    );
    console.log(`ratio daemon / baseline: ${fmt(daemonRate / baseRate, 3)}`);
    const cpuRatio = daemonCpu / Math.max(1, done) / (baseCpuSeconds / Math.max(1, ok));
    console.log(`CPU per check / baseline CPU per request: ${fmt(cpuRatio, 3)}${withConditions ? ' (target ≤ 1.3)' : ''}`);
  } finally {
    await daemon.stop();
    targets.kill('SIGTERM');
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const at = process.argv.indexOf('--location');
if (process.argv.includes('--serve-targets')) await serveTargets(flag('serve-targets', 8), process.argv.includes('--json'));
// Issue 19: checks through an agent against the same through the daemon (bench/probes-agent.ts).
else if (at > 0 && process.argv[at + 1] === 'agent') await (await import('./probes-agent.ts')).benchAgentLocation();
// One protocol type against its own baseline (bench/probe-types.ts).
else if (process.argv.includes('--type'))
  await (await import('./probe-types.ts')).benchProbeType(process.argv[process.argv.indexOf('--type') + 1]);
else await main();
