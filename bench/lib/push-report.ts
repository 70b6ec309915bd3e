import { quantile } from './lag.ts';
import { fmt } from './load.ts';
import { metricSum, type procStat } from './measure.ts';
import type { PingStats } from './ping-load.ts';
import { type PushWatch, quantileOf } from './push-watch.ts';

export const ms = (v: number) => `${fmt(v, 1)} ms`;
export const mb = (v: number) => `${fmt(v, 1)} MB`;
/** Answers by status, and what the client could not send or get answered. */
export const statuses = (s: PingStats) =>
  Object.entries(s.statuses)
    .map(([code, count]) => `${code}: ${count}`)
    .concat(s.errors ? [`errors: ${s.errors}`] : [], s.skipped ? [`skipped (client backlog): ${s.skipped}`] : [])
    .join(', ');

/** The cumulative buckets of the judge's own delay histogram in a metrics text. */
const judgeBuckets = (text: string) =>
  new Map(
    [...text.matchAll(/^monctl_push_judge_delay_seconds_bucket\{(?:[^}]*,)?le="([^"]+)"[^}]*\} (\d+)/gm)].map(
      (m) => [m[1] === '+Inf' ? Infinity : Number(m[1]), Number(m[2])] as const,
    ),
  );

export interface PushFigures {
  rate: number;
  roundCount: number;
  maxSeconds: number;
  /** Closed-loop rounds, the daemon then the bare server each. */
  rounds: Array<{ max: PingStats; bare: PingStats; ratio: number }>;
  steady: PingStats;
  bareAtRate: PingStats;
  cpuMs: number;
  bareCpuMs: number;
  /** Silent checks: id → lateAt (epoch ms). */
  silent: Map<number, number>;
  watch: PushWatch;
  metrics: string;
  end: ReturnType<typeof procStat>;
  rssMax: number;
}

/** bench:push's table and RESULT line: each figure beside its baseline and its target. */
export function printReport(f: PushFigures): void {
  const { rate, roundCount, maxSeconds, rounds, steady, bareAtRate, cpuMs, bareCpuMs, silent, watch, metrics, end, rssMax } = f;
  const { max, bare: bareMax, ratio } = [...rounds].sort((a, b) => a.ratio - b.ratio)[Math.floor(rounds.length / 2)];
  const judged = [...silent].filter(([id]) => watch.missed.has(id));
  const byArrival = judged.map(([id, lateAt]) => watch.missed.get(id)!.receivedAt - lateAt);
  const unexpected = [...watch.missed.keys()].filter((id) => !silent.has(id)).length;
  const p99Arrival = quantileOf(byArrival, 0.99);
  const p99Judge = 1000 * quantile(0.99, new Map(), judgeBuckets(metrics));
  const peak = Math.max(end.peakMb, rssMax);

  console.log('');
  console.log('figure | monctl | bare node:http | ratio | target');
  console.log(
    `ping req/s at most (median of ${roundCount} rounds of ${maxSeconds} s, ratios ${rounds.map((x) => fmt(x.ratio, 2)).join(' ')}) | ` +
      `${fmt(max.ok / max.seconds, 0)} | ${fmt(bareMax.ok / bareMax.seconds, 0)} | ${fmt(ratio, 2)} | ≥ 0.50`,
  );
  console.log(`  p50 / p99 at most | ${ms(max.p50Ms)} / ${ms(max.p99Ms)} | ${ms(bareMax.p50Ms)} / ${ms(bareMax.p99Ms)} | |`);
  console.log(
    `pings at ${rate}/s: answered 200 per s | ${fmt(steady.ok / steady.seconds, 0)} over ${fmt(steady.seconds, 0)} s | ${fmt(bareAtRate.ok / bareAtRate.seconds, 0)} over ${fmt(bareAtRate.seconds, 0)} s | |`,
  );
  console.log(
    `  p50 / p99 from when due | ${ms(steady.p50Ms)} / ${ms(steady.p99Ms)} | ${ms(bareAtRate.p50Ms)} / ${ms(bareAtRate.p99Ms)} | | `,
  );
  console.log(
    `  CPU per answered ping (process, ms; 10 ms ticks) | ${fmt(cpuMs, 3)} | ${fmt(bareCpuMs, 3)} | ${fmt(cpuMs / bareCpuMs, 1)} × | `,
  );
  console.log(`answers: at ${rate}/s ${statuses(steady)}; at most ${statuses(max)}`);
  console.log(
    `missed deadlines: ${judged.length} of ${silent.size} silent checks judged MISSED_PING; ${unexpected} pinged checks judged late; ` +
      `${watch.repeatedMisses} repeated judgements; ${watch.checks} entries on /api/events${watch.closed ? ` (stream: ${watch.closed})` : ''}`,
  );
  // The API's times have whole seconds: a deadline read as 12:00:05 fell within [12:00:05, 12:00:06), so
  // an event's delay measured from it is overstated by 0 to 1 s. The judge's histogram times the same
  // span inside the daemon to the millisecond, and decides the target.
  console.log(
    `deadline → its event on /api/events, measured from the API's whole-second lateAt (0 to 1 s too long): p50 ${ms(quantileOf(byArrival, 0.5))}, p99 ${ms(p99Arrival)}, max ${ms(Math.max(...byArrival))}`,
  );
  console.log(
    `deadline → recorded NOT_AVAILABLE, the judge's own histogram (monctl_push_judge_delay_seconds): p99 ${ms(p99Judge)} (target < 1000 ms)`,
  );
  console.log(
    `metrics: monctl_push_pings_total ${metricSum(metrics, 'monctl_push_pings_total')}, monctl_push_missed_total ${metricSum(metrics, 'monctl_push_missed_total')}, monctl_push_late ${metricSum(metrics, 'monctl_push_late')}`,
  );
  console.log(
    `daemon RSS: ${mb(end.rssMb)} at the end, ${mb(peak)} peak (VmHWM and samples each 0.5 s); CPU ${fmt(end.cpuSeconds)} s (target < 1024 MB)`,
  );
  const verdict = (ok: boolean) => (ok ? 'PASS' : 'MISS');
  console.log(
    `RESULT push: ratio ${fmt(ratio, 2)} ${verdict(ratio >= 0.5)}; deadline p99 ${ms(p99Judge)} ${verdict(p99Judge < 1000 && judged.length === silent.size)}; ` +
      `RSS peak ${mb(peak)} ${verdict(peak < 1024)}`,
  );
}
