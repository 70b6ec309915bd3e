import { request } from 'undici';

/** Cumulative buckets of `monctl_scheduler_lag_seconds` from the daemon's metrics (checks run by the daemon). */
export async function lagBuckets(url: string, key: string): Promise<Map<number, number>> {
  const res = await request(`${url}/actuator/prometheus`, { headers: { authorization: `Bearer ${key}` } });
  return parseLagBuckets(await res.body.text(), 'daemon');
}

/** The cumulative lag buckets of one location (`daemon` or an agent's name) in a metrics text. */
export function parseLagBuckets(text: string, location: string): Map<number, number> {
  const out = new Map<number, number>();
  const pattern = new RegExp(`^monctl_scheduler_lag_seconds_bucket\\{le="([^"]+)",location="${location}"\\} (\\d+)`, 'gm');
  for (const m of text.matchAll(pattern)) out.set(m[1] === '+Inf' ? Infinity : Number(m[1]), Number(m[2]));
  return out;
}

/** histogram_quantile over the difference of two bucket snapshots. */
export function quantile(q: number, before: Map<number, number>, after: Map<number, number>): number {
  const bounds = [...after.keys()].sort((a, b) => a - b);
  const counts = bounds.map((b) => after.get(b)! - (before.get(b) ?? 0));
  const total = counts[counts.length - 1];
  if (!total) return NaN;
  const rank = q * total;
  for (let i = 0; i < bounds.length; i++) {
    if (counts[i] >= rank) {
      if (bounds[i] === Infinity) return bounds[i - 1];
      const lower = i === 0 ? 0 : bounds[i - 1];
      const below = i === 0 ? 0 : counts[i - 1];
      return lower + (bounds[i] - lower) * ((rank - below) / Math.max(1, counts[i] - below));
    }
  }
  return NaN;
}

/** Bucket snapshots of several daemons added up (pods: one histogram for the whole cluster). */
export function sumBuckets(all: Array<Map<number, number>>): Map<number, number> {
  const out = new Map<number, number>();
  for (const m of all) for (const [k, v] of m) out.set(k, (out.get(k) ?? 0) + v);
  return out;
}
