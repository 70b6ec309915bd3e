import autocannon from 'autocannon';

export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  mbps: number;
  errors: number;
  non2xx: number;
}

/** Drives `url` with autocannon (in this process) and returns the figures a report needs. */
export async function load(
  url: string,
  opts: { connections?: number; seconds?: number; headers?: Record<string, string> } = {},
): Promise<LoadResult> {
  const r = await autocannon({
    url,
    connections: opts.connections ?? 32,
    duration: opts.seconds ?? 10,
    headers: opts.headers,
  });
  return {
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    mbps: r.throughput.average / 1e6,
    errors: r.errors + r.timeouts,
    non2xx: r.non2xx,
  };
}

export function fmt(n: number, digits = 1): string {
  return n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

/** Reads a numeric CLI flag `--name=value` or `--name value`, else the default. */
export function flag(name: string, fallback: number): number {
  const argv = process.argv;
  const i = argv.findIndex((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  if (i < 0) return fallback;
  const raw = argv[i].includes('=') ? argv[i].split('=')[1] : argv[i + 1];
  const n = Number(raw);
  return Number.isFinite(n) ? n : fallback;
}
