import type { TestDaemon } from '../helpers/daemon.ts';

/** A sample of the pod's metrics: the value of the series `name{labels}` (NaN when absent). */
export async function metric(d: TestDaemon, series: string): Promise<number> {
  const text = (await d.admin.raw('GET', '/actuator/prometheus')).text;
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? NaN : Number(line.slice(series.length + 1));
}

export const waitingOut = (d: TestDaemon) => metric(d, 'monctl_pod_events_waiting{direction="out"}');
export const shedOut = (d: TestDaemon, reason: 'full' | 'failed') =>
  metric(d, `monctl_pod_events_shed_total{direction="out",reason="${reason}"}`);
export const waitingIn = (d: TestDaemon) => metric(d, 'monctl_pod_events_waiting{direction="in"}');
export const shedIn = (d: TestDaemon, reason: 'full' | 'failed') =>
  metric(d, `monctl_pod_events_shed_total{direction="in",reason="${reason}"}`);
