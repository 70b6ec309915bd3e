import type { RssSummary } from './soak-rss.ts';

/** What a soak run measured: the counts the issue asks for, RSS per process, and every unexpected error. */
export interface SoakReport {
  options: { seconds: number; resources: number; subscribers: number; intervalSeconds: number; warmup: number };
  /** Wall-clock seconds of the load phase (setup and teardown excluded). */
  elapsedSeconds: number;
  setupSeconds: number;
  checks: { done: number; expected: number; failed: number };
  apiReads: number;
  tunnelRequests: number;
  sse: { subscribers: number; connected: number; events: number; pings: number; eventsByPath: Record<string, number> };
  /** RSS per process; the daemon's also split into V8's committed heap and the rest (malloc, code, stacks). */
  rss: { daemon: RssSummary; agent: RssSummary; daemonV8Heap: RssSummary; daemonOutsideHeap: RssSummary };
  /** Floors of the daemon's heap used + external memory in the first and last quarter after the warm-up. */
  daemonLive: { startMb: number; endMb: number; growthMb: number; samples: number };
  /** Committed MB per V8 heap space at the end of the warm-up and at the end of the load phase. */
  daemonHeapSpaces: Record<string, { startMb: number; endMb: number }>;
  /** The daemon's own V8 figures at the end of the load phase (prom-client default metrics), in MB. */
  daemonHeap: { usedMb: number; totalMb: number; externalMb: number };
  /** Daemon log entries at warn (40) level, for the record. */
  daemonWarnings: number;
  errors: { count: number; first: string[] };
}

const f = (n: number, digits = 1) =>
  Number.isFinite(n) ? n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }) : 'n/a';
const i = (n: number) => n.toLocaleString('en-US');

function rssLine(name: string, r: RssSummary): string {
  return (
    `  ${name.padEnd(7)}: min ${f(r.minMb)} MB, max ${f(r.maxMb)} MB, ${f(r.startMb)} → ${f(r.endMb)} MB (growth ${f(r.growthMb)} MB), ` +
    `slope ${f(r.slopeMbPerMin, 2)} MB/min over ${r.steadySamples} samples (second half only: ${f(r.lateSlopeMbPerMin, 2)} MB/min)`
  );
}

/** The report as the `npm run soak` output (plain text, one figure per line). */
export function formatReport(r: SoakReport): string {
  const o = r.options;
  const per = (n: number) => f(n / r.elapsedSeconds);
  return [
    `soak: ${o.seconds} s, ${i(o.resources)} resources every ${o.intervalSeconds} s, ${i(r.sse.subscribers)} SSE subscribers, one tunnel agent`,
    `  setup ${f(r.setupSeconds)} s, load phase ${f(r.elapsedSeconds)} s`,
    `checks          ${i(r.checks.done)} (${per(r.checks.done)}/s; ${f((100 * r.checks.done) / r.checks.expected, 0)} % of the ${i(r.checks.expected)} due), failed ${i(r.checks.failed)}`,
    `API reads       ${i(r.apiReads)} (${per(r.apiReads)}/s)`,
    `tunnel requests ${i(r.tunnelRequests)} (${per(r.tunnelRequests)}/s)`,
    `SSE             ${i(r.sse.connected)}/${i(r.sse.subscribers)} connected at the end, ${i(r.sse.events)} events, ${i(r.sse.pings)} pings`,
    ...Object.entries(r.sse.eventsByPath).map(([path, n]) => `  ${path}: ${i(n)} events`),
    `RSS after a ${f(o.warmup * 100, 0)} % warm-up:`,
    rssLine('daemon', r.rss.daemon),
    rssLine('agent', r.rss.agent),
    rssLine('daemon V8 heap committed', r.rss.daemonV8Heap),
    rssLine('daemon RSS minus V8 heap committed (rough: committed pages need not be resident)', r.rss.daemonOutsideHeap),
    `  daemon live memory (heap used + external, floor): ${f(r.daemonLive.startMb)} → ${f(r.daemonLive.endMb)} MB (growth ${f(r.daemonLive.growthMb)} MB, ${r.daemonLive.samples} samples)`,
    `  daemon V8 heap spaces, committed after the warm-up → at the end: ${Object.entries(r.daemonHeapSpaces)
      .map(([space, s]) => `${space} ${f(s.startMb)} → ${f(s.endMb)} MB`)
      .join(', ')}`,
    `  daemon heap at the end: ${f(r.daemonHeap.usedMb)} MB used of ${f(r.daemonHeap.totalMb)} MB, external ${f(r.daemonHeap.externalMb)} MB`,
    `daemon warnings ${i(r.daemonWarnings)}`,
    `errors          ${i(r.errors.count)}`,
    ...r.errors.first.map((e) => `  ${e}`),
  ].join('\n');
}
