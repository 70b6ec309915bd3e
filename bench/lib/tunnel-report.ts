import { fmt } from './load.ts';
import type { WrkFigures } from './wrk.ts';

/** One wrk run on one path, with the CPU (ms) each of the path's own processes spent meanwhile. */
export interface Measured {
  f: WrkFigures;
  cpuMs: Record<string, number>;
}

/** Everything measured on one path. */
export interface PathResult {
  name: string;
  small: Measured[];
  download: Measured[];
  /** MB per process name: after set-up before any load, now, and the peak (VmHWM) by the end. */
  idle: Record<string, number>;
  after: Record<string, number>;
  peak: Record<string, number>;
}

export function median(values: number[]): number {
  const v = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return NaN;
  const mid = Math.floor(v.length / 2);
  return v.length % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

const sum = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);
const pad = (s: string, n: number) => s.padStart(n);

/** CPU µs per request per process (small responses), median over rounds. */
export function cpuPerRequest(runs: Measured[]): Record<string, number> {
  const names = Object.keys(runs[0]?.cpuMs ?? {});
  return Object.fromEntries(names.map((k) => [k, median(runs.map((m) => (m.cpuMs[k] * 1000) / Math.max(1, m.f.requests)))]));
}

/** CPU ms per 100 MB relayed per process (downloads), median over rounds. */
export function cpuPer100Mb(runs: Measured[]): Record<string, number> {
  const names = Object.keys(runs[0]?.cpuMs ?? {});
  return Object.fromEntries(names.map((k) => [k, median(runs.map((m) => m.cpuMs[k] / Math.max(1e-9, m.f.bytes / (100 * 1024 * 1024))))]));
}

const med = (runs: Measured[], key: keyof WrkFigures) => median(runs.map((m) => m.f[key]));
const detail = (r: Record<string, number>, digits = 1) =>
  Object.keys(r).length > 1
    ? ` (${Object.entries(r)
        .map(([k, v]) => `${k} ${fmt(v, digits)}`)
        .join(', ')})`
    : '';
const total = (r: Record<string, number>, digits = 1) => (Object.keys(r).length ? fmt(sum(r), digits) + detail(r, digits) : '-');

export function printResults(results: PathResult[]): void {
  console.log("small responses: median of the rounds; CPU is µs per request of the path's own processes (not wrk, not the target)");
  console.log('path                 req/s   p50 ms   p99 ms  errors  CPU µs/request');
  for (const r of results) {
    if (!r.small.length) continue;
    const e = r.small.reduce((n, m) => n + m.f.errors, 0);
    console.log(
      `${r.name.padEnd(15)} ${pad(fmt(med(r.small, 'rps'), 0), 10)} ${pad(fmt(med(r.small, 'p50'), 2), 8)} ${pad(fmt(med(r.small, 'p99'), 2), 8)} ${pad(String(e), 7)}  ${total(cpuPerRequest(r.small))}`,
    );
  }
  console.log('\n100 MB downloads over 4 connections: CPU is ms per 100 MB relayed');
  console.log('path                  MB/s   p50 ms   p99 ms  errors  CPU ms/100 MB');
  for (const r of results) {
    if (!r.download.length) continue;
    const e = r.download.reduce((n, m) => n + m.f.errors, 0);
    console.log(
      `${r.name.padEnd(15)} ${pad(fmt(med(r.download, 'mbps'), 1), 10)} ${pad(fmt(med(r.download, 'p50'), 0), 8)} ${pad(fmt(med(r.download, 'p99'), 0), 8)} ${pad(String(e), 7)}  ${total(cpuPer100Mb(r.download), 0)}`,
    );
  }
  console.log("\nmemory, MB (RSS): idle = set up and connected, before any load; peak = VmHWM by the end (summed over a path's processes)");
  console.log('path              idle     peak    after');
  for (const r of results) {
    if (!Object.keys(r.idle).length) continue;
    console.log(
      `${r.name.padEnd(15)} ${pad(fmt(sum(r.idle)), 6)} ${pad(fmt(sum(r.peak)), 8)} ${pad(fmt(sum(r.after)), 8)}${detail(r.idle).replace('(', '(idle: ')}${detail(r.peak).replace('(', '(peak: ')}`,
    );
  }
}

/** monctl's ratio to each other path, and the issue's targets. */
export function printRatios(results: PathResult[]): void {
  const monctl = results.find((r) => r.name === 'monctl');
  if (!monctl?.small.length) return;
  const rps = (r: PathResult) => med(r.small, 'rps');
  const mbps = (r: PathResult) => med(r.download, 'mbps');
  const cpu = (r: PathResult) => sum(cpuPerRequest(r.small));
  const dlCpu = (r: PathResult) => sum(cpuPer100Mb(r.download));
  const idle = (r: PathResult) => sum(r.idle);
  console.log('\nmonctl / peer, same run (req/s and MB/s: ≥ 1 is monctl faster; CPU and RSS: ≤ 1 is monctl leaner)');
  console.log('peer             req/s  CPU/req  p99 small    MB/s  CPU/100MB  idle RSS');
  const ratio = (a: number, b: number) => (Number.isFinite(a / b) && b > 0 ? fmt(a / b, 2) : '-');
  for (const r of results) {
    if (r === monctl) continue;
    const hasCpu = Object.keys(r.idle).length > 0;
    console.log(
      `${r.name.padEnd(15)} ${pad(ratio(rps(monctl), rps(r)), 6)} ${pad(hasCpu ? ratio(cpu(monctl), cpu(r)) : '-', 8)} ${pad(ratio(med(monctl.small, 'p99'), med(r.small, 'p99')), 10)} ${pad(ratio(mbps(monctl), mbps(r)), 7)} ${pad(hasCpu ? ratio(dlCpu(monctl), dlCpu(r)) : '-', 10)} ${pad(hasCpu ? ratio(idle(monctl), idle(r)) : '-', 9)}`,
    );
  }
  const peer = results.find((r) => r.name === 'nginx → ssh -R');
  const ssh = results.find((r) => r.name === 'ssh -R');
  const verdict = (ok: boolean) => (ok ? 'PASS' : 'MISS');
  const lines: string[] = [];
  if (peer?.small.length) {
    lines.push(
      `small req/s ≥ 1.0 × nginx → ssh -R: ${ratio(rps(monctl), rps(peer))} ${verdict(rps(monctl) >= rps(peer))}` +
        (ssh?.small.length ? `; stretch ≥ 1.0 × ssh -R: ${ratio(rps(monctl), rps(ssh))} ${verdict(rps(monctl) >= rps(ssh))}` : ''),
    );
    lines.push(
      `own CPU per request ≤ 1.0 × nginx → ssh -R: ${ratio(cpu(monctl), cpu(peer))} ${verdict(cpu(monctl) <= cpu(peer))}; stretch ≤ 25 µs: ${fmt(cpu(monctl))} µs ${verdict(cpu(monctl) <= 25)}`,
    );
  }
  if (peer?.download.length && monctl.download.length) {
    lines.push(
      `download MB/s ≥ 1.0 × nginx → ssh -R: ${ratio(mbps(monctl), mbps(peer))} ${verdict(mbps(monctl) >= mbps(peer))}` +
        (ssh?.download.length ? `; stretch ≥ 1.0 × ssh -R: ${ratio(mbps(monctl), mbps(ssh))} ${verdict(mbps(monctl) >= mbps(ssh))}` : ''),
    );
  }
  const { daemon = NaN, agent = NaN } = monctl.idle;
  lines.push(
    `daemon idle RSS < 110 MB: ${fmt(daemon)} ${verdict(daemon < 110)}; agent idle < 50 MB: ${fmt(agent)} ${verdict(agent < 50)}; ` +
      `agent peak < 80 MB: ${fmt(monctl.peak.agent ?? NaN)} ${verdict((monctl.peak.agent ?? Infinity) < 80)}`,
  );
  console.log('\ntargets (issue 20):');
  for (const line of lines) console.log(`  ${line}`);
}
