/**
 * The three-agent row of `npm run bench:tunnel`: the same small-response wrk
 * load through a route whose pool has three agents (three `monctl agent`
 * processes, round-robin, the same target) and through the single-agent route,
 * alternating in the same run. Reports req/s and the daemon's CPU per request
 * of both, the agents' CPU, each pool agent's share (the route's
 * pool[].requests), and the ratios against the targets: req/s with three agents
 * ≥ one agent's, daemon CPU per request ≤ 1.1× the single-agent route's.
 */
import { loadavg } from 'node:os';
import { operations } from '../../src/api/operations.ts';
import { cpuMs } from './measure.ts';
import { treeCpuMs } from './procs.ts';
import { countSyscalls, type SyscallCounts } from './syscalls.ts';
import type { MonctlTunnel } from './tunnel-monctl.ts';
import { median } from './tunnel-report.ts';
import type { WrkFigures } from './wrk.ts';

export interface PoolBench {
  monctl: MonctlTunnel;
  target: string;
  seconds: number;
  connections: number;
  rounds: number;
  /** Where strace writes; without it, no syscall counts. */
  straceDir?: string;
  wrk(url: string, host: string, connections: number, seconds: number): WrkFigures;
}

interface Run {
  f: WrkFigures;
  daemonUs: number;
  /** The part of daemonUs spent in the kernel (system time): writes that wake a sleeping agent cost there. */
  daemonSysUs: number;
  agentsUs: number;
}

const POOL_HOST = 'pool.test';
const fmt = (n: number, digits = 1) => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const load = () =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(' ');

/**
 * Measures the three-agent route against the one-agent route: the lines to print and, with
 * `straceDir`, the daemon's syscalls per request on each route (a separate short run each).
 */
export async function poolBench(b: PoolBench): Promise<{ lines: string[]; syscalls: SyscallCounts[] }> {
  const { monctl } = b;
  const extra = [await monctl.addAgent('bench-2'), await monctl.addAgent('bench-3')];
  const route = await monctl.admin.call(operations.createRoute, {
    body: {
      name: 'pool-bench',
      type: 'HTTP',
      hostname: POOL_HOST,
      target: b.target,
      agents: [{ agentId: monctl.agentId }, ...extra.map((a) => ({ agentId: a.id }))],
    },
  });
  const agentPids = [monctl.agentPid, ...extra.map((a) => a.pid)];
  const measure = (host: string, pids: number[]): Run => {
    const daemon = treeCpuMs([monctl.daemonPid]);
    const sys = cpuMs(monctl.daemonPid).system;
    const agents = treeCpuMs(pids);
    const f = b.wrk(`${monctl.url}/`, host, b.connections, b.seconds);
    const per = (ms: number) => (ms * 1000) / Math.max(1, f.requests);
    return {
      f,
      daemonUs: per(treeCpuMs([monctl.daemonPid]) - daemon),
      daemonSysUs: per(cpuMs(monctl.daemonPid).system - sys),
      agentsUs: per(treeCpuMs(pids) - agents),
    };
  };
  const loadBefore = load();
  for (const host of ['bench.test', POOL_HOST]) b.wrk(`${monctl.url}/`, host, b.connections, 1); // warm-up
  const one: Run[] = [];
  const three: Run[] = [];
  for (let round = 0; round < b.rounds; round++) {
    // Alternate which goes first, so that neither always runs on a machine warmed (or loaded) by the other.
    const order = round % 2 ? ['three', 'one'] : ['one', 'three'];
    for (const which of order)
      if (which === 'one') one.push(measure('bench.test', [monctl.agentPid]));
      else three.push(measure(POOL_HOST, agentPids));
  }
  // wrk ran under spawnSync, which blocks this event loop: let it see the API connection the daemon
  // closed meanwhile (keep-alive timeout) before the next call, or undici reuses the dead socket.
  await new Promise((r) => setTimeout(r, 200));
  const pool = (await monctl.admin.call(operations.getRoute, { params: { id: route.id } })).pool ?? [];
  const total = pool.reduce((n, m) => n + m.requests, 0);
  const med = (runs: Run[], f: (r: Run) => number) => median(runs.map(f));
  const row = (name: string, runs: Run[]) =>
    `${name.padEnd(10)}${fmt(
      med(runs, (r) => r.f.rps),
      0,
    ).padStart(10)}${fmt(
      med(runs, (r) => r.f.p50),
      2,
    ).padStart(9)}` +
    `${fmt(
      med(runs, (r) => r.f.p99),
      2,
    ).padStart(9)}${String(med(runs, (r) => r.f.errors)).padStart(8)}` +
    `${fmt(med(runs, (r) => r.daemonUs)).padStart(15)}${fmt(med(runs, (r) => r.daemonSysUs)).padStart(10)}` +
    `${fmt(med(runs, (r) => r.agentsUs)).padStart(15)}`;
  const syscalls: SyscallCounts[] = [];
  if (b.straceDir)
    for (const [name, host, pids] of [
      ['1 agent', 'bench.test', [monctl.agentPid]],
      ['3 agents', POOL_HOST, agentPids],
    ] as const) {
      const path = { name, url: monctl.url, host, procs: { daemon: () => [monctl.daemonPid], agents: () => [...pids] } };
      syscalls.push(await countSyscalls(path, b.straceDir, () => b.wrk(`${monctl.url}/`, host, b.connections, Math.min(b.seconds, 2))));
    }
  const rps = med(three, (r) => r.f.rps) / med(one, (r) => r.f.rps);
  const cpu = med(three, (r) => r.daemonUs) / med(one, (r) => r.daemonUs);
  const lines = [
    'route'.padEnd(10) +
      ['req/s', 10, 'p50 ms', 9, 'p99 ms', 9, 'errors', 8, 'daemon µs/req', 15, 'of it sys', 10, 'agents µs/req', 15]
        .flatMap((x, i, all) => (i % 2 ? [] : [String(x).padStart(all[i + 1] as number)]))
        .join(''),
    row('1 agent', one),
    row('3 agents', three),
    `share of the 3-agent route's requests per agent (pool[].requests): ${pool
      .map((m) => `${m.name} ${total ? Math.round((100 * m.requests) / total) : 0}%`)
      .join(', ')}${total ? '' : ' (the balancer counted none)'}`,
    `targets: req/s 3 agents / 1 agent ≥ 1.0: ${rps.toFixed(2)} ${rps >= 1 ? 'PASS' : 'MISS'}; ` +
      `daemon CPU per request 3 / 1 ≤ 1.1: ${cpu.toFixed(2)} ${cpu <= 1.1 ? 'PASS' : 'MISS'}`,
    `load average (1, 5, 15 min): ${loadBefore} before, ${load()} after`,
  ];
  return { lines, syscalls };
}
