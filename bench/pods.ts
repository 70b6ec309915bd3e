/**
 * `npm run bench:pods`: N HTTP resources (default 10,000) at a fixed interval
 * (default 60 s) on 1, 2 and 3 pods sharing one PostgreSQL database (a
 * throw-away cluster, as the tests make: fsync off), against the single
 * daemon on SQLite in the same run. Each round starts on a fresh database,
 * creates the resources through the API, waits until every one has been
 * checked once, then measures whole intervals: checks done versus due (at
 * the targets), p99 start lag (the pods' lag histograms added up), CPU per
 * check of each pod, and the database server's CPU (the postmaster and its
 * backends, from /proc).
 *
 * Flags: --resources N, --interval S, --intervals K (measured), --targets T, --max-pods P (default 3),
 * --only-pods P (only the round of P pods; 0, the default, runs them all, SQLite first).
 * A short run: `npm run bench:pods -- --resources 1000 --interval 10 --intervals 2`.
 * At scale: `npm run bench:pods -- --resources 1000000 --interval 300 --only-pods 3`.
 *
 * "Exactly once" is judged at the targets (bench/lib/check-targets.ts), per resource: a check less than
 * half an interval after the previous one of the same resource is a double (two pods, or a shard handed
 * over twice), a gap of more than one and a half intervals a miss.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { startPgCluster, type PgCluster } from '../test/helpers/postgres.ts';
import { startDaemon, type TestDaemon } from '../test/helpers/daemon.ts';
import { lagBuckets, quantile, sumBuckets } from './lib/lag.ts';
import { flag, fmt } from './lib/load.ts';
import { cpuMs, metricSum } from './lib/measure.ts';
import { createResources } from './lib/resources.ts';
import { startTargets } from './lib/background-checks.ts';
import type { TargetStats } from './lib/check-targets.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const env = { MONCTL_CHECK_RESPONSES: '0' };

/** CPU seconds of a process tree's root and its live children, and of children it has reaped (PostgreSQL's backends). */
function treeCpuSeconds(root: number): number {
  const stat = (pid: number | string) => {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  };
  const own = stat(root);
  let ticks = Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14]);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const f = stat(entry);
      if (Number(f[1]) === root) ticks += Number(f[11]) + Number(f[12]);
    } catch {
      /* gone meanwhile */
    }
  }
  return ticks / 100;
}

async function metrics(d: TestDaemon): Promise<string> {
  const res = await request(`${d.url}/actuator/prometheus`, { headers: { authorization: `Bearer ${d.adminKey}` } });
  return res.body.text();
}

interface Round {
  label: string;
  done: number;
  due: number;
  /** Checks of a resource less than half an interval after its previous one, and gaps over 1.5 intervals. */
  doubles: number;
  misses: number;
  /** The machine's load average at the end of the measured intervals. */
  load: string;
  seconds: number;
  p99: number;
  perPod: string[];
  dbCpu: number | null;
}

/** One round: `pods` daemons (0: one daemon on SQLite) watching `n` resources under `/r<round>/`. */
async function round(opts: {
  label: string;
  pods: number;
  n: number;
  interval: number;
  intervals: number;
  round: number;
  pathOf: (round: number, i: number) => string;
  distinct: () => Promise<number>;
  stats: () => Promise<TargetStats>;
  pg: PgCluster;
}): Promise<Round> {
  const { n, interval, intervals } = opts;
  const databaseUrl = opts.pods > 0 ? await opts.pg.createDatabase('bench') : undefined;
  const daemons: TestDaemon[] = [];
  try {
    const first = await startDaemon({ env, ...(databaseUrl ? { databaseUrl, args: ['--pod-name', 'pod-1'] } : {}) });
    daemons.push(first);
    for (let p = 2; p <= opts.pods; p++) {
      daemons.push(await startDaemon({ env, databaseUrl, adminKeyFrom: first, args: ['--pod-name', `pod-${p}`] }));
    }
    if (opts.pods > 1) {
      // The pods share the shards before the resources come (each holds its share at the first check).
      for (;;) {
        const topo = (await (
          await request(`${first.url}/admin/api/topology`, { headers: { authorization: `Bearer ${first.adminKey}` } })
        ).body.json()) as {
          pods: Array<{ load?: { shards: number | null } }>;
        };
        const shards = topo.pods.map((p) => p.load?.shards ?? 0);
        if (shards.length === opts.pods && shards.every((s) => s >= Math.floor(64 / opts.pods))) break;
        await sleep(500);
      }
    }
    const seen0 = await opts.distinct();
    const createdIn = await createResources(first.url, first.adminKey, n, (i) => ({
      name: `bench-${i}`,
      resourceType: 'HTTP',
      target: opts.pathOf(opts.round, i),
      intervalSeconds: interval,
    }));
    while ((await opts.distinct()) - seen0 < n) await sleep(200);
    console.log(
      `  ${opts.label}: created ${n} resources in ${fmt(createdIn)} s; every one checked once; measuring ${intervals} interval(s)`,
    );

    const postmaster = opts.pods > 0 ? Number(readFileSync(join(opts.pg.dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]) : 0;
    const snap = async () => ({
      targets: await opts.stats(),
      lag: await Promise.all(daemons.map((d) => lagBuckets(d.url, d.adminKey))),
      checks: await Promise.all(daemons.map(async (d) => metricSum(await metrics(d), 'monctl_checks_total'))),
      cpu: daemons.map((d) => {
        const c = cpuMs(d.proc.pid!);
        return (c.user + c.system) / 1000;
      }),
      db: postmaster ? treeCpuSeconds(postmaster) : 0,
      at: Date.now(),
    });
    const before = await snap();
    await sleep(intervals * interval * 1000);
    const after = await snap();
    const seconds = (after.at - before.at) / 1000;
    const perPod = daemons.map((_, i) => {
      const checks = after.checks[i] - before.checks[i];
      const cpu = after.cpu[i] - before.cpu[i];
      return `${fmt(checks, 0)} checks, ${fmt(cpu, 2)} s CPU, ${fmt((1000 * cpu) / Math.max(1, checks), 3)} ms/check`;
    });
    return {
      label: opts.label,
      done: after.targets.total - before.targets.total,
      due: n * intervals,
      doubles: after.targets.early - before.targets.early,
      misses: after.targets.late - before.targets.late,
      load: loadavg()
        .map((l) => l.toFixed(2))
        .join(' '),
      seconds,
      p99: quantile(0.99, sumBuckets(before.lag), sumBuckets(after.lag)),
      perPod,
      dbCpu: opts.pods > 0 ? after.db - before.db : null,
    };
  } finally {
    await Promise.all(daemons.map((d) => d.stop()));
    if (databaseUrl) await opts.pg.dropDatabase(databaseUrl);
  }
}

async function main(): Promise<void> {
  const n = flag('resources', 10_000);
  const interval = flag('interval', 60);
  const intervals = flag('intervals', 1);
  const maxPods = flag('max-pods', 3);
  const onlyPods = flag('only-pods', 0);
  const targetCount = flag('targets', 8);
  // The target servers (a child process: their CPU is not the daemons'), counting doubles and misses per resource.
  const { ports, stats, stop: stopTargets } = await startTargets(targetCount, interval);
  const pg = await startPgCluster();
  console.log(
    `pods bench: ${n} HTTP resources every ${interval} s on ${ports.length} local targets; ` +
      (onlyPods > 0
        ? `${onlyPods} pods on one PostgreSQL (throw-away cluster, fsync off)`
        : `1..${maxPods} pods on one PostgreSQL (throw-away cluster, fsync off) against one daemon on SQLite`) +
      `; CPU ${cpus()[0]?.model ?? 'unknown'}, load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
  );
  const results: Round[] = [];
  try {
    const plan = onlyPods > 0 ? [onlyPods] : [0, ...Array.from({ length: maxPods }, (_, i) => i + 1)];
    for (const [i, pods] of plan.entries()) {
      results.push(
        await round({
          label: pods === 0 ? 'SQLite, 1 daemon' : `PostgreSQL, ${pods} pod${pods > 1 ? 's' : ''}`,
          pods,
          n,
          interval,
          intervals,
          round: i,
          pathOf: (r, k) => `http://127.0.0.1:${ports[k % ports.length]}/r${r}/${k}`,
          distinct: async () => (await stats()).distinct,
          stats,
          pg,
        }),
      );
    }
  } finally {
    await pg.stop();
    stopTargets();
  }
  console.log('');
  for (const r of results) {
    console.log(`${r.label}:`);
    console.log(`  checks done vs due:  ${fmt(r.done, 0)} / ${fmt(r.due, 0)} (${fmt((100 * r.done) / r.due)} %) over ${fmt(r.seconds)} s`);
    console.log(
      `  exactly once:        ${fmt(r.doubles, 0)} checks less than half an interval after the same resource's previous one, ` +
        `${fmt(r.misses, 0)} gaps over 1.5 intervals${r.doubles === 0 && r.misses === 0 && r.done >= r.due ? ' (every due check done once)' : ''}`,
    );
    console.log(`  p99 start lag:       ${fmt(r.p99 * 1000)} ms (load average ${r.load})`);
    r.perPod.forEach((line, i) =>
      console.log(`  ${r.dbCpu === null ? 'daemon' : `pod-${i + 1}`}:${' '.repeat(r.dbCpu === null ? 14 : 15)}${line}`),
    );
    if (r.dbCpu !== null)
      console.log(
        `  database CPU:        ${fmt(r.dbCpu, 2)} s (${fmt((100 * r.dbCpu) / r.seconds)} % of one core, ${fmt((1000 * r.dbCpu) / Math.max(1, r.done), 3)} ms per check)`,
      );
  }
}

await main();
