import { spawnSync } from 'node:child_process';

/** What one wrk run reports (its --latency output). */
export interface WrkFigures {
  rps: number;
  /** Latency percentiles, ms. */
  p50: number;
  p99: number;
  mbps: number;
  /** Socket errors, timeouts and non-2xx/3xx answers together. */
  errors: number;
  /** Completed requests, and every response byte read (partial responses included). */
  requests: number;
  bytes: number;
}

function ms(text: string): number {
  const m = /([\d.]+)(us|ms|s|m)\b/.exec(text);
  if (!m) return NaN;
  const n = Number(m[1]);
  return ({ us: n / 1000, ms: n, s: n * 1000, m: n * 60_000 } as Record<string, number>)[m[2]];
}

function bytes(text: string): number {
  const m = /([\d.]+)([KMGT]?)B/.exec(text);
  if (!m) return NaN;
  return Number(m[1]) * ({ '': 1, K: 1024, M: 1024 ** 2, G: 1024 ** 3, T: 1024 ** 4 } as Record<string, number>)[m[2]];
}

/** One wrk run (one thread) against `url` with a Host header; throws when wrk fails. */
export function wrk(url: string, host: string, connections: number, seconds: number): WrkFigures {
  const args = ['-t', '1', '-c', String(connections), '-d', `${seconds}s`, '--latency', '--timeout', '30s', '-H', `Host: ${host}`, url];
  const r = spawnSync('wrk', args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`wrk failed: ${r.stderr}`);
  const out = r.stdout;
  const line = (re: RegExp) => re.exec(out)?.[1] ?? '';
  const errors =
    [...out.matchAll(/Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/g)].reduce(
      (n, m) => n + Number(m[1]) + Number(m[2]) + Number(m[3]) + Number(m[4]),
      0,
    ) + Number(line(/Non-2xx or 3xx responses: (\d+)/) || 0);
  return {
    rps: Number(line(/Requests\/sec:\s+([\d.]+)/)),
    p50: ms(line(/ 50%\s+(\S+)/)),
    p99: ms(line(/ 99%\s+(\S+)/)),
    mbps: bytes(line(/Transfer\/sec:\s+(\S+)/)) / 1e6,
    errors,
    requests: Number(line(/(\d+) requests in/)),
    bytes: bytes(line(/requests in [^,]+, (\S+) read/)),
  };
}
