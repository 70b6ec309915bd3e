/**
 * `npm run bench:push`: push checks at scale (docs/API.md#push-checks). One daemon on SQLite in
 * a temp dir; N PUSH resources (default 100,000) created through the API, periods spread over
 * 60..300 s with a small grace, so that their deadlines fall over five minutes; pings by
 * `GET /ping/{uuid}` at a fixed rate (default 2,000/s) round-robin over all but one in ten,
 * which stay silent and must each be judged MISSED_PING once. Prints:
 * - the ping requests/s at most, against a bare node:http server answering `OK` to the same
 *   requests from the same client in the same run (target ≥ 0.5 of it), and p50/p99 at the rate;
 * - the delay from each silent check's deadline (`push.lateAt`) to its MISSED_PING entry on
 *   `/api/events` (target p99 < 1 s), by the entry's checkedAt and by the event's arrival;
 * - the daemon's RSS, its peak and at the end (target < 1 GB).
 * Nothing fails on a slow host: figures and targets only.
 *
 *   npm run bench:push -- --resources 10000 --rate 500 --min-period 30 --max-period 60
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { mkdtempSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDaemon } from '../test/helpers/daemon.ts';
import { profileTop } from './lib/cpu-profile.ts';
import { flag, fmt } from './lib/load.ts';
import { procStat } from './lib/measure.ts';
import { createPushChecks } from './lib/push-create.ts';
import { PingLoad, type PingStats } from './lib/ping-load.ts';
import { mb, ms, printReport, statuses } from './lib/push-report.ts';
import { PushWatch } from './lib/push-watch.ts';

const n = flag('resources', 100_000);
const rate = flag('rate', 2000);
const silentEvery = flag('silent-every', 10);
const minPeriod = flag('min-period', 60);
const maxPeriod = flag('max-period', 300);
const grace = flag('grace', 5);
const maxSeconds = flag('max-seconds', 5);
const roundCount = flag('rounds', 3);
const rateSeconds = flag('baseline-seconds', 20);
const connections = flag('connections', 128);
const pipelining = flag('pipelining', 1);
const concurrency = flag('create-concurrency', 16);
const createRate = flag('create-rate', 100);

/** The daemon's ping rate limits, raised: one loopback client sends every ping of the bench. */
const DAEMON_ARGS = ['--ping-rate', '1000000', '--ping-burst', '100000'];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Child mode: the baseline, a bare node:http server answering `OK` to every request. */
async function serveBare(): Promise<void> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'content-length': 2 }).end('OK');
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  process.stdout.write(`${(server.address() as { port: number }).port}\n`);
}

/** The baseline: a bare node:http server in its own process, as the daemon is, and the same client on it. */
async function startBaseline(): Promise<{ load: PingLoad; pid: number; stop: () => Promise<number> }> {
  const child = spawn(process.execPath, ['--disable-warning=ExperimentalWarning', import.meta.filename, '--serve-bare'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  process.on('exit', () => child.kill('SIGKILL'));
  const port = Number(await new Promise<string>((resolve) => child.stdout!.once('data', (d) => resolve(String(d)))));
  const load = new PingLoad({ origin: `http://127.0.0.1:${port}`, connections, pipelining });
  load.addPaths(Array.from({ length: n - Math.floor(n / silentEvery) }, () => `/ping/${randomUUID()}`));
  await load.max(2); // the warm-up: connections, and the JIT of both sides
  return { load, pid: child.pid!, stop: () => (child.kill('SIGTERM'), load.close()) };
}

/** `window()` of an open loop at the bench's rate after a 2 s warm-up. */
async function atRate(load: PingLoad, seconds: number): Promise<PingStats> {
  load.startRate(rate);
  await sleep(2000);
  await load.window();
  await sleep(seconds * 1000);
  return load.stop();
}

async function main(): Promise<void> {
  console.log(
    `push bench: ${n} PUSH resources (periods: the creation time left + ${minPeriod}..${maxPeriod} s, grace ${grace} s; 1 in ${silentEvery} silent), ` +
      `pings GET /ping/{uuid} at ${rate}/s (${connections} connections, pipelining ${pipelining}), SQLite`,
  );
  console.log(
    `CPU: ${cpus()[0]?.model ?? 'unknown'} (${cpus().length} cores); load average ${loadavg()
      .map((l) => fmt(l, 2))
      .join(' ')}`,
  );
  const bare = await startBaseline();
  const bareCpu0 = procStat(bare.pid).cpuSeconds;
  const bareAtRate = await atRate(bare.load, rateSeconds);
  const bareCpuMs = (1000 * (procStat(bare.pid).cpuSeconds - bareCpu0)) / Math.max(1, bareAtRate.ok);
  console.log(
    `baseline (bare node:http, same client) at ${rate}/s: p50 ${ms(bareAtRate.p50Ms)}, p99 ${ms(bareAtRate.p99Ms)} (${statuses(bareAtRate)})`,
  );

  const profDir = process.argv.includes('--profile') ? mkdtempSync(join(tmpdir(), 'monctl-bench-push-prof-')) : undefined;
  const profEnv: Record<string, string> = profDir ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${profDir}` } : {};
  const daemon = await startDaemon({ env: { MONCTL_CHECK_RESPONSES: '0', ...profEnv }, args: DAEMON_ARGS });
  const pid = daemon.proc.pid!;
  let rssMax = 0;
  const sampler = setInterval(() => (rssMax = Math.max(rssMax, procStat(pid).rssMb || 0)), 500);
  const watch = new PushWatch();
  const load = new PingLoad({ origin: daemon.url, connections, pipelining });
  try {
    await watch.connect(daemon.url, daemon.adminKey);
    const silent = new Map<number, number>();
    const pinged: Array<{ path: string; lateAt: number }> = [];
    // Creation takes minutes (no pings meanwhile: they would slow it further), and a new check's
    // deadline counts from its creation: each period is the creation time still expected, plus a
    // spread of minPeriod..maxPeriod that does not follow the creation order, so that every
    // first deadline falls in the minutes after creation, while the pings run.
    const began = performance.now();
    // The rate so far once it means something (5 % done); before that, an assumed one: an early
    // estimate from a few hundred creations gave periods of hours in a 100,000 run.
    const remaining = (i: number) => (n - i) / (i < Math.max(200, n / 20) ? createRate : i / ((performance.now() - began) / 1000));
    const createdIn = await createPushChecks(
      daemon.url,
      daemon.adminKey,
      n,
      concurrency,
      (i) => ({
        name: `push-${i}`,
        resourceType: 'PUSH',
        periodSeconds: Math.ceil(remaining(i)) + minPeriod + ((i * 7919) % (maxPeriod - minPeriod + 1)),
        graceSeconds: grace,
      }),
      (i, created) => {
        if (i % silentEvery === 0) silent.set(created.id, created.lateAt);
        else pinged.push({ path: `/ping/${created.uuid}`, lateAt: created.lateAt });
      },
    );
    // The pings go round in deadline order: each check is pinged before its first deadline
    // whenever the daemon keeps up with the rate.
    pinged.sort((a, b) => a.lateAt - b.lateAt);
    load.addPaths(pinged.map((p) => p.path));
    const rssCreated = procStat(pid);
    const firstLate = Math.min(pinged[0]?.lateAt ?? Infinity, ...silent.values());
    console.log(
      `created ${n} resources through the API in ${fmt(createdIn)} s (${concurrency} in flight, each a POST and a GET of its admin view); ` +
        `RSS ${mb(rssCreated.rssMb)}; first deadline ${fmt((firstLate - Date.now()) / 1000)} s from now`,
    );
    await load.window(); // the figures at the rate start here
    const cpu0 = procStat(pid).cpuSeconds;
    load.startRate(rate);

    // Until every silent check's deadline has passed, with a margin for the judge and the stream.
    const lastLate = Math.max(...silent.values());
    // Bounded: a period estimated too long must not keep the bench waiting for hours.
    const waitUntil = Math.min(lastLate + 5000, Date.now() + (maxPeriod + grace + 120) * 1000);
    let nextProgress = Date.now() + 30_000;
    while (Date.now() < waitUntil + 25_000 && (Date.now() < waitUntil || watch.missed.size < silent.size) && !watch.closed) {
      await sleep(250);
      if (Date.now() < nextProgress) continue;
      nextProgress += 30_000;
      console.log(
        `  … ${watch.missed.size} / ${silent.size} missed deadlines seen, ${watch.checks} entries, RSS ${mb(procStat(pid).rssMb)}`,
      );
    }
    const steady = await load.stop();
    const cpuMs = (1000 * (procStat(pid).cpuSeconds - cpu0)) / Math.max(1, steady.ok);
    // Most req/s: rounds of the daemon then the bare server back to back, both under the same
    // load of the machine; the median round's ratio.
    const rounds: Array<{ max: PingStats; bare: PingStats; ratio: number }> = [];
    for (let r = 0; r < roundCount; r++) {
      const ours = await load.max(maxSeconds);
      const theirs = await bare.load.max(maxSeconds);
      rounds.push({ max: ours, bare: theirs, ratio: ours.ok / ours.seconds / (theirs.ok / theirs.seconds) });
    }

    const metrics = await (await fetch(`${daemon.url}/actuator/prometheus`, { headers: { 'x-api-key': daemon.adminKey } })).text();
    const end = procStat(pid);

    printReport({ rate, roundCount, maxSeconds, rounds, steady, bareAtRate, cpuMs, bareCpuMs, silent, watch, metrics, end, rssMax });
  } finally {
    clearInterval(sampler);
    await load.close();
    await watch.close();
    await daemon.stop();
    await bare.stop();
    if (profDir) for (const line of profileTop(profDir)) console.log(line);
  }
}

// Interrupted: the exit handlers stop the daemon and the baseline server.
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130));
if (process.argv.includes('--serve-bare')) await serveBare();
else await main();
