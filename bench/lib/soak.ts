/**
 * The soak run of issue 8 (item 5): against ONE real daemon, for a bounded
 * time and all at once, thousands of resources checked at the shortest
 * interval, API read load, hundreds of SSE subscribers and traffic through a
 * real `monctl agent`. Counts every unexpected error and samples the RSS of
 * the daemon and the agent every second. Used by test/reliability/soak.test.ts
 * (short) and `npm run soak` (long).
 */
import { rmSync } from 'node:fs';
import { request } from 'undici';
import { startDaemon, type TestDaemon } from '../../test/helpers/daemon.ts';
import { ErrorLog, startReads, startTunnelLoad } from './soak-load.ts';
import type { SoakReport } from './soak-report.ts';
import { metricSum, rssMb } from './measure.ts';
import { LiveSeries, RssSeries } from './soak-rss.ts';
import { caller, createResources, type SoakTunnel, startSoakTunnel } from './soak-setup.ts';
import { type SubscriberState, type Subscribers, startSubscribers } from './soak-subscribers.ts';
import { type SoakTargets, startTargets, tunnelBody } from './soak-targets.ts';

export interface SoakOptions {
  seconds: number;
  /** Resources checked (10 % of them TCP). */
  resources: number;
  /** Subscribers of `/api/events`; a fifth as many watch the topology, a twentieth a route's log. */
  subscribers: number;
  /** The shortest the API accepts (docs/API.md#resource-fields: 10 s). */
  intervalSeconds?: number;
  /** Fraction of the run left out of the RSS figures. */
  warmup?: number;
  readers?: number;
  tunnelClients?: number;
  /** Progress lines (the bench prints them; the test stays quiet). */
  progress?: (line: string) => void;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** V8's heap spaces as prom-client names them; committed size of each at the end of the warm-up and of the run. */
const HEAP_SPACES = ['new', 'old', 'code', 'large_object'];

const alive = (p: { exitCode: number | null; signalCode: string | null }) => p.exitCode === null && p.signalCode === null;

export async function runSoak(o: SoakOptions): Promise<SoakReport> {
  const intervalSeconds = o.intervalSeconds ?? 10;
  const warmup = o.warmup ?? 0.25;
  const progress = o.progress ?? (() => {});
  const errors = new ErrorLog();
  let targets: SoakTargets | undefined;
  let daemon: TestDaemon | undefined;
  let tunnel: SoakTunnel | undefined;
  let subscribers: Subscribers | undefined;
  let api: ReturnType<typeof caller> | undefined;
  const setupStart = performance.now();
  try {
    targets = await startTargets(4, 2);
    daemon = await startDaemon();
    api = caller(daemon.url, daemon.adminKey);
    const call = api.call;
    const { token: userKey } = await call<{ token: string }>('POST', '/admin/api/api-keys', { name: 'soak-user', role: 'USER' });
    progress(`creating ${o.resources} resources`);
    const ids = await createResources(call, targets, o.resources, 0.1, intervalSeconds);
    const marker = await call<{ id: number }>('POST', '/api/resources', {
      name: 'soak-marker',
      resourceType: 'HTTP',
      target: targets.http[0],
      intervalSeconds: 86_400,
    });
    tunnel = await startSoakTunnel(call, daemon.url, targets.tunnel);

    const admin = { 'x-api-key': daemon.adminKey };
    const logPath = `/admin/sse/routes/${tunnel.routeId}/log`;
    const half = Math.floor(o.subscribers / 2);
    const specs = [
      { path: '/api/events', count: o.subscribers - half, headers: admin },
      // USER subscribers go through the per-event visibility filter, ADMIN ones do not.
      { path: '/api/events', count: half, headers: { 'x-api-key': userKey } },
      { path: '/admin/sse/topology', count: Math.max(1, Math.round(o.subscribers / 5)), headers: admin },
      { path: logPath, count: Math.max(1, Math.round(o.subscribers / 20)), headers: admin, snapshot: false },
    ];
    const total = specs.reduce((n, s) => n + s.count, 0);
    progress(`connecting ${total} SSE subscribers`);
    subscribers = startSubscribers(daemon.url, specs);
    const connectBy = performance.now() + 180_000;
    for (let states = await subscribers.status(); states.filter((s) => s.ready).length < total; states = await subscribers.status()) {
      const failed = states.find((s) => s.closed);
      if (failed) throw new Error(`an SSE subscriber of ${failed.path} failed to connect: ${failed.closed}`);
      if (performance.now() > connectBy)
        throw new Error(`only ${states.filter((s) => s.ready).length} of ${total} SSE subscribers connected in 3 minutes`);
      await sleep(200);
    }
    const metricsBefore = await (await fetch(`${daemon.url}/actuator/prometheus`)).text();
    const setupSeconds = (performance.now() - setupStart) / 1000;

    // The load phase.
    progress(`load for ${o.seconds} s`);
    const rss = { daemon: new RssSeries(daemon.proc.pid!), agent: new RssSeries(tunnel.agent.proc.pid!) };
    const reads = startReads(
      {
        url: daemon.url,
        adminKey: daemon.adminKey,
        userKey,
        resourceIds: ids,
        routeId: tunnel.routeId,
        clients: o.readers ?? 4,
        pauseMs: 5,
      },
      errors,
    );
    const traffic = startTunnelLoad({ edgeUrl: daemon.edgeUrl, host: tunnel.host, clients: o.tunnelClients ?? 4, pauseMs: 5 }, errors);
    const live = new LiveSeries();
    let warmMetrics = metricsBefore;
    const v8Heap = new RssSeries(daemon.proc.pid!);
    const outsideHeap = new RssSeries(daemon.proc.pid!);
    let liveBusy = false;
    const started = performance.now();
    for (let second = 1; performance.now() - started < o.seconds * 1000; second++) {
      rss.daemon.sample();
      rss.agent.sample();
      if (!liveBusy) {
        liveBusy = true;
        fetch(`${daemon.url}/actuator/prometheus`)
          .then((r) => r.text())
          .then((text) => {
            live.add(text);
            if (performance.now() - started < o.seconds * 1000 * warmup) warmMetrics = text;
            // Where RSS grows: V8's committed heap, or everything else (malloc, code, stacks).
            const heapMb = metricSum(text, 'nodejs_heap_size_total_bytes') / 2 ** 20;
            if (heapMb > 0) {
              v8Heap.push(heapMb);
              outsideHeap.push(rssMb(daemon!.proc.pid!) - heapMb);
            }
          })
          .catch(() => {})
          .finally(() => (liveBusy = false));
      }
      if (!alive(daemon.proc) || !alive(tunnel.agent.proc)) break;
      if (second % 10 === 0) {
        progress(
          `${second} s: daemon ${rss.daemon.points.at(-1)?.mb.toFixed(0)} MB, agent ${rss.agent.points.at(-1)?.mb.toFixed(0)} MB, ` +
            `${reads.done()} reads, ${traffic.done()} tunnel requests, ${errors.count} errors`,
        );
      }
      await sleep(started + second * 1000 - performance.now());
    }
    if (!alive(daemon.proc))
      errors.add('daemon', `exited during the run (${daemon.proc.exitCode ?? daemon.proc.signalCode})\n${daemon.stderr()}`);
    if (!alive(tunnel.agent.proc)) errors.add('agent', `exited during the run\n${tunnel.agent.stderr()}`);

    // Still under load: every subscriber must still receive a frame sent now.
    await markers(call, subscribers, daemon.edgeUrl, tunnel, marker.id, logPath, errors);
    const runLogs = daemon.logs.length;
    const apiReads = await reads.stop();
    const tunnelRequests = await traffic.stop();
    const elapsedSeconds = (performance.now() - started) / 1000;
    const metricsAfter = await (await fetch(`${daemon.url}/actuator/prometheus`)).text();

    const states = await subscribers.close();
    subscribers = undefined;
    for (const s of states.filter((x) => x.closed)) errors.add('sse', `${s.path}: ${s.closed}`);
    const eventsByPath: Record<string, number> = {};
    for (const s of states) eventsByPath[s.path] = (eventsByPath[s.path] ?? 0) + s.events;

    // The agent stays connected throughout; daemon and agent log no errors.
    await tunnel.agent.stop();
    const code = await daemon.stop();
    if (code !== 0) errors.add('daemon', `exit code ${code} on SIGTERM`);
    for (const entry of daemon.logs) if (Number(entry.level) >= 50) errors.add('daemon log', JSON.stringify(entry));
    for (const entry of daemon.logs.slice(0, runLogs)) {
      if (entry.msg === 'tunnel: agent disconnected')
        errors.add('daemon log', `agent disconnected during the run: ${JSON.stringify(entry)}`);
    }
    for (const entry of tunnel.agent.logs) if (Number(entry.level) >= 50) errors.add('agent log', JSON.stringify(entry));
    // Both log JSON to stdout; anything on stderr is a crash trace or a Node warning (a listener leak, say).
    if (daemon.stderr().trim()) errors.add('daemon stderr', daemon.stderr());
    if (tunnel.agent.stderr().trim()) errors.add('agent stderr', tunnel.agent.stderr());

    const checksOf = (text: string) => metricSum(text, 'monctl_checks_total');
    const failedOf = (text: string) => metricSum(text, 'monctl_check_failures_total');
    const failed = failedOf(metricsAfter) - failedOf(metricsBefore);
    if (failed > 0) errors.add('checks', `${failed} checks of healthy local targets failed during the run`);
    return {
      options: { seconds: o.seconds, resources: o.resources, subscribers: total, intervalSeconds, warmup },
      elapsedSeconds,
      setupSeconds,
      checks: {
        done: checksOf(metricsAfter) - checksOf(metricsBefore),
        expected: Math.floor((o.resources * elapsedSeconds) / intervalSeconds),
        failed,
      },
      apiReads,
      tunnelRequests,
      sse: {
        subscribers: total,
        connected: states.filter((s) => s.ready && !s.closed).length,
        events: states.reduce((n, s) => n + s.events, 0),
        pings: states.reduce((n, s) => n + s.pings, 0),
        eventsByPath,
      },
      rss: {
        daemon: rss.daemon.summary(warmup),
        agent: rss.agent.summary(warmup),
        daemonV8Heap: v8Heap.summary(warmup),
        daemonOutsideHeap: outsideHeap.summary(warmup),
      },
      daemonLive: live.floors(warmup),
      daemonHeapSpaces: Object.fromEntries(
        HEAP_SPACES.map((space) => {
          const total = (text: string) => metricSum(text, `nodejs_heap_space_size_total_bytes{space="${space}"}`) / 2 ** 20;
          return [space, { startMb: total(warmMetrics), endMb: total(metricsAfter) }];
        }),
      ),
      daemonHeap: {
        usedMb: metricSum(metricsAfter, 'nodejs_heap_size_used_bytes') / 2 ** 20,
        totalMb: metricSum(metricsAfter, 'nodejs_heap_size_total_bytes') / 2 ** 20,
        externalMb: metricSum(metricsAfter, 'nodejs_external_memory_bytes') / 2 ** 20,
      },
      daemonWarnings: daemon.logs.filter((e) => Number(e.level) === 40).length,
      errors: { count: errors.count, first: errors.first },
    };
  } finally {
    await subscribers?.close().catch(() => {});
    await tunnel?.agent.stop('SIGKILL');
    if (tunnel) rmSync(tunnel.dir, { recursive: true, force: true });
    await daemon?.stop('SIGKILL');
    await api?.close();
    await targets?.close();
  }
}

/**
 * One known frame per stream, sent while the load still runs: a manual check
 * of the marker resource, an update of the marker route, and a tunnel request
 * with a marked path. A subscriber that does not see its frame is an error.
 */
async function markers(
  call: ReturnType<typeof caller>['call'],
  subscribers: Subscribers,
  edgeUrl: string,
  tunnel: SoakTunnel,
  markerId: number,
  logPath: string,
  errors: ErrorLog,
) {
  const tag = `marker-${Date.now()}`;
  await subscribers.mark({
    '/api/events': `"resourceId":${markerId}[,}]`,
    '/admin/sse/topology': `${tag}[^0-9]`,
    [logPath]: `/soak/${tag}[^0-9]`,
  });
  await call('POST', `/api/resources/${markerId}/check`);
  await call('PUT', `/admin/api/routes/${tunnel.markerRouteId}`, { target: `http://127.0.0.1:9/${tag}/` });
  const res = await request(`${edgeUrl}/soak/${tag}/`, { headers: { host: tunnel.host } }).catch((err: Error) => err);
  const text = res instanceof Error ? res.message : await res.body.text();
  if (res instanceof Error || res.statusCode !== 200 || text !== tunnelBody(`/soak/${tag}/`))
    errors.add('tunnel', `marker request: ${text}`);
  // Bounded: the frames are out within milliseconds; a minute covers a loaded machine many times over.
  let states: SubscriberState[] = [];
  for (const until = performance.now() + 60_000; performance.now() < until; await sleep(200)) {
    states = await subscribers.status();
    if (states.every((s) => s.marked || s.closed)) break;
  }
  const missed = states.filter((s) => !s.marked && !s.closed);
  for (const s of missed.slice(0, 10)) errors.add('sse', `${s.path}: no marker frame within 60 s (${s.events} events so far)`);
  if (missed.length > 10) errors.add('sse', `… and ${missed.length - 10} more subscribers without the marker frame`);
}
