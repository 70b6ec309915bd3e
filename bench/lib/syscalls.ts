import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, release } from 'node:os';
import { join } from 'node:path';
import { fmt } from './load.ts';
import type { BenchPath } from './tunnel-peers.ts';
import type { WrkFigures } from './wrk.ts';

/**
 * What tells figures from different hosts apart (issue 25: the same bench gave 1.53× on an AMD EPYC
 * and 0.42–0.67× on an Intel Xeon): the CPU model, its count and the kernel.
 */
export function hostLine(): string {
  const model = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? cpus()[0]?.model ?? 'unknown';
  return `host: ${model.trim()}, ${cpus().length} CPUs, Linux ${release()}`;
}

/** Syscalls one path's processes made per request, by process name: calls of each kind. */
export interface SyscallCounts {
  name: string;
  requests: number;
  /** Per process name: syscall → calls per request. */
  perProcess: Record<string, Record<string, number>>;
}

/** `strace -c` summary rows: syscall → calls. */
function parseSummary(text: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const m = /^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)\s*$/.exec(line);
    if (m && m[2] !== 'total') out[m[2]] = (out[m[2]] ?? 0) + Number(m[1]);
  }
  return out;
}

/**
 * A short measured phase apart from the timed rounds (strace slows what it traces): `strace -c -f`
 * on each of the path's processes while `load` runs, and the calls divided by its requests.
 */
export async function countSyscalls(path: BenchPath, dir: string, load: () => WrkFigures): Promise<SyscallCounts> {
  const tracers = Object.entries(path.procs).map(([name, pids], i) => {
    const file = join(dir, `strace-${i}.txt`);
    const child = spawn('strace', ['-c', '-f', '-qq', '-o', file, ...pids().flatMap((p) => ['-p', String(p)])], { stdio: 'ignore' });
    return { name, file, child, exited: new Promise((r) => child.once('exit', r)) };
  });
  await new Promise((r) => setTimeout(r, 500)); // attached
  const f = load();
  for (const t of tracers) t.child.kill('SIGINT');
  await Promise.all(tracers.map((t) => t.exited));
  const perProcess: SyscallCounts['perProcess'] = {};
  for (const t of tracers) {
    let calls: Record<string, number> = {};
    try {
      calls = parseSummary(readFileSync(t.file, 'utf8'));
    } catch {
      /* no summary: strace could not attach */
    }
    perProcess[t.name] = Object.fromEntries(Object.entries(calls).map(([k, v]) => [k, v / Math.max(1, f.requests)]));
  }
  return { name: path.name, requests: f.requests, perProcess };
}

/** Socket I/O and polling first: what issue 25 compared between hosts. */
const SHOWN = [
  ['reads', /^(read|readv|recvfrom|recvmsg)$/],
  ['writes', /^(write|sendto|sendmsg)$/],
  ['writev', /^writev$/],
  ['epoll', /^epoll_/],
] as const;

export function printSyscalls(rows: SyscallCounts[]): void {
  console.log(
    '\nsyscalls per small request (strace -c -f over a separate run; reads: read/recvfrom/recvmsg, writes: write/sendto/sendmsg)',
  );
  console.log('path             process    reads  writes  writev   epoll   total');
  for (const row of rows) {
    for (const [proc, calls] of Object.entries(row.perProcess)) {
      const sum = (re: RegExp) =>
        Object.entries(calls)
          .filter(([k]) => re.test(k))
          .reduce((n, [, v]) => n + v, 0);
      const total = Object.values(calls).reduce((a, b) => a + b, 0);
      console.log(
        `${row.name.padEnd(16)} ${proc.padEnd(8)} ${SHOWN.map(([, re]) => fmt(sum(re), 2).padStart(7)).join(' ')} ${fmt(total, 2).padStart(7)}`,
      );
    }
  }
}
