/**
 * Server-side request time from the daemon's own histogram
 * (`monctl_http_request_duration_seconds`, from the request's arrival to its
 * response's end): the bucket counts of one route, read before and after a
 * load, give its quantiles as bucket upper bounds ("at most X ms").
 */
export type Buckets = Map<number, number>;

export async function readBuckets(daemonUrl: string, route: string): Promise<Buckets> {
  const text = await (await fetch(`${daemonUrl}/actuator/prometheus`)).text();
  const out: Buckets = new Map();
  for (const line of text.split('\n')) {
    if (!line.startsWith('monctl_http_request_duration_seconds_bucket{')) continue;
    if (!line.includes(`route="${route}"`) || !line.includes('method="GET"')) continue;
    const le = /le="([^"]+)"/.exec(line)![1];
    const bound = le === '+Inf' ? Infinity : Number(le);
    out.set(bound, (out.get(bound) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return out;
}

/** The upper bound (ms) of the bucket holding quantile `q` of the requests between two readings. */
export function quantileMs(before: Buckets, after: Buckets, q: number): number {
  const bounds = [...after.keys()].sort((a, b) => a - b);
  const total = (after.get(Infinity) ?? 0) - (before.get(Infinity) ?? 0);
  for (const bound of bounds) {
    if ((after.get(bound) ?? 0) - (before.get(bound) ?? 0) >= q * total) return bound * 1000;
  }
  return Infinity;
}
