import { metricSum, rssMb } from './measure.ts';

export interface RssSummary {
  samples: number;
  /** Samples after the warm-up, the ones the figures below are computed from. */
  steadySamples: number;
  minMb: number;
  maxMb: number;
  /** Least-squares slope of RSS over time after the warm-up. */
  slopeMbPerMin: number;
  /** The same over the second half of the run only: V8 grows its heap in steps for a while, and a long run should be flat here. */
  lateSlopeMbPerMin: number;
  /** Median of the last quarter of the steady samples minus the median of the first quarter. */
  growthMb: number;
  /** RSS at the end of the warm-up and at the end (medians of those quarters). */
  startMb: number;
  endMb: number;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? Number.NaN : s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** A series of RSS samples of one process, taken by the caller's timer. */
export class RssSeries {
  readonly points: Array<{ t: number; mb: number }> = [];
  readonly pid: number;
  constructor(pid: number) {
    this.pid = pid;
  }

  sample(now = performance.now()): void {
    this.push(rssMb(this.pid), now);
  }

  /** Adds a figure derived elsewhere (the V8 heap, RSS outside it). */
  push(mb: number, now = performance.now()): void {
    if (Number.isFinite(mb)) this.points.push({ t: now, mb });
  }

  /** Figures over the samples after the first `warmup` fraction of the series' time span. */
  summary(warmup: number): RssSummary {
    const all = this.points;
    const t0 = all[0]?.t ?? 0;
    const span = (all.at(-1)?.t ?? 0) - t0;
    const steady = all.filter((p) => p.t >= t0 + span * warmup);
    const mbs = steady.map((p) => p.mb);
    const quarter = Math.max(1, Math.floor(steady.length / 4));
    const startMb = median(mbs.slice(0, quarter));
    const endMb = median(mbs.slice(-quarter));
    return {
      samples: all.length,
      steadySamples: steady.length,
      minMb: mbs.length ? Math.min(...mbs) : Number.NaN,
      maxMb: mbs.length ? Math.max(...mbs) : Number.NaN,
      slopeMbPerMin: slope(steady.map((p) => [(p.t - t0) / 60_000, p.mb])),
      lateSlopeMbPerMin: slope(all.filter((p) => p.t >= t0 + span / 2).map((p) => [(p.t - t0) / 60_000, p.mb])),
      growthMb: endMb - startMb,
      startMb,
      endMb,
    };
  }
}

/**
 * The daemon's live memory as it reports it (V8 heap used plus external
 * buffers, from its Prometheus metrics). RSS ramps while V8 sizes its heap;
 * the floor of this sawtooth (its low points right after collections) only
 * rises when something is retained, so it tells a leak from the ramp sooner.
 */
export class LiveSeries {
  readonly points: Array<{ t: number; mb: number }> = [];

  add(prometheusText: string, now = performance.now()): void {
    const bytes = metricSum(prometheusText, 'nodejs_heap_size_used_bytes') + metricSum(prometheusText, 'nodejs_external_memory_bytes');
    if (bytes > 0) this.points.push({ t: now, mb: bytes / 2 ** 20 });
  }

  /** Lowest value in the first and in the last quarter after the warm-up, and the difference. */
  floors(warmup: number): { startMb: number; endMb: number; growthMb: number; samples: number } {
    const t0 = this.points[0]?.t ?? 0;
    const span = (this.points.at(-1)?.t ?? 0) - t0;
    const steady = this.points.filter((p) => p.t >= t0 + span * warmup).map((p) => p.mb);
    const quarter = Math.max(1, Math.floor(steady.length / 4));
    const startMb = Math.min(...steady.slice(0, quarter));
    const endMb = Math.min(...steady.slice(-quarter));
    return { startMb, endMb, growthMb: endMb - startMb, samples: steady.length };
  }
}

/** Least-squares slope of y over x; NaN with fewer than two distinct x. */
export function slope(points: Array<[number, number]>): number {
  const n = points.length;
  if (n < 2) return Number.NaN;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  let num = 0;
  let den = 0;
  for (const [x, y] of points) {
    num += (x - mx) * (y - my);
    den += (x - mx) ** 2;
  }
  return den === 0 ? Number.NaN : num / den;
}
