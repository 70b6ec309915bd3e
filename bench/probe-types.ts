/**
 * `npm run bench:probes -- --type dns|ping|tls|udp|grpc`: N resources of one protocol type
 * (default 10,000) every S seconds (default 60) against loopback targets, measured over whole
 * intervals once every resource has had its first check, then the type's baseline doing the same
 * checks bare at the same rate for as long. Prints checks done vs due, the CPU per check of the
 * daemon and of the baseline and their ratio (target ≤ 1.5×), RSS, the CPU model and the load
 * average, and `RESULT probes-<type>: ratio X PASS|MISS`.
 *
 * Each type is a module bench/lib/probe-type-<type>.ts whose default export is a ProbeTypeBench
 * (bench/lib/probe-type.ts): its targets run in a child process, so that their CPU is not the daemon's.
 * Flags: --resources N, --interval S, --intervals K (measured), --baseline-seconds S (default S).
 * A short run: `npm run bench:probes -- --type dns --resources 500 --interval 10 --intervals 2 --baseline-seconds 10`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { startDaemon, type TestDaemon } from '../test/helpers/daemon.ts';
import { flag, fmt } from './lib/load.ts';
import { maxRssOver, procStat } from './lib/measure.ts';
import type { ProbeTypeBench } from './lib/probe-type.ts';
import { createResources } from './lib/resources.ts';

/** The daemon's CPU per check may be at most this many times the baseline's. */
const TARGET_RATIO = 1.5;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Checks of `type` the daemon has run since it started, and how many of them were AVAILABLE (monctl_checks_total). */
async function checksRun(d: TestDaemon, type: string): Promise<{ total: number; available: number }> {
  const res = await request(`${d.url}/actuator/prometheus`, { headers: { authorization: `Bearer ${d.adminKey}` } });
  let total = 0;
  let available = 0;
  for (const line of (await res.body.text()).split('\n')) {
    if (!line.startsWith('monctl_checks_total{') || !line.includes(`type="${type}"`)) continue;
    const n = Number(line.slice(line.lastIndexOf(' ') + 1));
    total += n;
    if (line.includes('status="AVAILABLE"')) available += n;
  }
  return { total, available };
}

export async function benchProbeType(name: string): Promise<void> {
  const n = flag('resources', 10_000);
  const interval = flag('interval', 60);
  const intervals = flag('intervals', 2);
  const baselineSeconds = flag('baseline-seconds', interval);
  const mod = ((await import(`./lib/probe-type-${name}.ts`)) as { default: ProbeTypeBench }).default;
  const type = mod.type;
  const targets = await mod.start(n);
  const dataDir = mkdtempSync(join(tmpdir(), `monctl-bench-${name}-`));
  const env = { MONCTL_CHECK_RESPONSES: '0' };
  let daemon = await startDaemon({ env, dataDir: join(dataDir, 'data') });
  process.on('exit', () => daemon.proc.kill('SIGKILL'));
  console.log(`probes bench (${type}): ${n} resources every ${interval} s on loopback targets, measuring ${intervals} interval(s)`);
  console.log(
    `CPU: ${cpus()[0]?.model ?? 'unknown'} (${cpus().length} cores), load average ${loadavg()
      .map((l) => fmt(l, 2))
      .join(' ')}`,
  );
  try {
    const createdIn = await createResources(daemon.url, daemon.adminKey, n, (i) => {
      const { target, options } = targets.resource(i);
      return {
        name: `bench-${i}`,
        resourceType: type,
        target,
        intervalSeconds: interval,
        ...(options ? { [type.toLowerCase()]: options } : {}),
      };
    });
    console.log(`created ${n} resources through the API in ${fmt(createdIn)} s`);
    // Each resource's first check falls somewhere in its first interval.
    while ((await checksRun(daemon, type)).total < n) await sleep(500);
    const first = await checksRun(daemon, type);
    console.log(`every resource checked once: ${first.available} of ${first.total} checks AVAILABLE; restarting the daemon`);
    if (first.available < first.total) console.log('WARNING: checks fail, so the figures below measure failures, not answers');
    // As bench/probes.ts: creation leaves V8's heap grown; a restart shows the steady state.
    await daemon.stop();
    daemon = await startDaemon({ env, dataDir: join(dataDir, 'data') });
    const before = {
      checks: await checksRun(daemon, type),
      answered: await targets.answered(),
      proc: procStat(daemon.proc.pid!),
      at: Date.now(),
    };
    const maxRss = await maxRssOver(daemon.proc.pid!, before.at, intervals * interval * 1000, before.proc.rssMb);
    const after = {
      checks: await checksRun(daemon, type),
      answered: await targets.answered(),
      proc: procStat(daemon.proc.pid!),
      at: Date.now(),
    };
    await daemon.stop();
    const seconds = (after.at - before.at) / 1000;
    const done = after.checks.total - before.checks.total;
    const availableDone = after.checks.available - before.checks.available;
    const due = n * intervals;
    const daemonCpuMs = (after.proc.cpuSeconds - before.proc.cpuSeconds) * 1000;

    const base = await mod.baseline(targets, n, n / interval, baselineSeconds);
    const daemonPerCheck = daemonCpuMs / Math.max(1, done);
    const basePerCheck = base.cpuMs / Math.max(1, base.checks);
    const ratio = daemonPerCheck / basePerCheck;
    const answered =
      before.answered !== null && after.answered !== null ? `, the targets answered ${after.answered - before.answered}` : '';
    console.log(
      `checks done vs due:      ${done} / ${due} (${fmt((100 * done) / due)} %) over ${fmt(seconds)} s, ${availableDone} AVAILABLE${answered}`,
    );
    console.log(
      `daemon CPU:              ${fmt(daemonCpuMs / 1000, 2)} s (${fmt(daemonCpuMs / (10 * seconds))} % of one core), ${fmt(daemonPerCheck, 3)} ms per check`,
    );
    console.log(
      `baseline (${mod.baselineName}): ${base.checks} checks in ${fmt(baselineSeconds)} s, ${fmt(base.cpuMs / 1000, 2)} s CPU, ${fmt(basePerCheck, 3)} ms per check`,
    );
    console.log(`daemon RSS:              ${fmt(after.proc.rssMb)} MB at the end, ${fmt(maxRss)} MB max sampled each second`);
    console.log(
      `load average:            ${loadavg()
        .map((l) => fmt(l, 2))
        .join(' ')} (${cpus().length} cores)`,
    );
    console.log(`CPU per check, daemon / baseline: ${fmt(ratio, 2)} (target ≤ ${TARGET_RATIO})`);
    console.log(`RESULT probes-${name}: ratio ${fmt(ratio, 2)} ${ratio <= TARGET_RATIO ? 'PASS' : 'MISS'}`);
  } finally {
    await daemon.stop();
    await targets.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
