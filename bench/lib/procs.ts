import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { cpuMs, memoryMb } from './measure.ts';

/**
 * Child processes of a bench and the figures of process trees: a peer such as
 * nginx (master and worker) or sshd (listener, monitor and session) is several
 * processes, counted together under one name.
 */

const children: ChildProcess[] = [];
process.on('exit', () => children.forEach((c) => c.kill('SIGKILL')));

/** Stops every child spawned so far: SIGTERM, then SIGKILL for those still there after 6 s (a bench must end). */
export async function stopChildren(): Promise<void> {
  const alive = () => children.filter((c) => c.exitCode === null && c.signalCode === null);
  alive().forEach((c) => c.kill('SIGTERM'));
  for (let waited = 0; alive().length && waited < 6000; waited += 100) await new Promise((r) => setTimeout(r, 100));
  alive().forEach((c) => c.kill('SIGKILL'));
}

/**
 * Spawns a process and resolves with the first line of its output (stdout, or stderr with
 * `fromStderr`) for which `ready` returns something; without `ready`, at once.
 */
export function run(
  cmd: string,
  args: string[],
  opts: { ready?: (line: string) => string | undefined; env?: Record<string, string>; cwd?: string; fromStderr?: boolean } = {},
): Promise<[ChildProcess, string]> {
  const { ready, fromStderr } = opts;
  const watched = ready ? 'pipe' : 'ignore';
  const child = spawn(cmd, args, {
    cwd: opts.cwd,
    env: { ...process.env, ...opts.env },
    stdio: ['ignore', fromStderr ? 'ignore' : watched, fromStderr ? watched : 'inherit'],
  });
  children.push(child);
  if (!ready) return Promise.resolve([child, '']);
  const out = (fromStderr ? child.stderr : child.stdout)!;
  return new Promise((resolve, reject) => {
    let buffer = '';
    const onData = (c: Buffer) => {
      buffer += c;
      for (const line of buffer.split('\n')) {
        const found = ready(line);
        if (found === undefined) continue;
        out.off('data', onData);
        out.resume();
        return resolve([child, found]);
      }
    };
    out.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${cmd} ${args.join(' ')} exited with ${code}:\n${buffer.slice(-2000)}`)));
  });
}

/** The process and all its descendants now (a forked sshd session appears once a client connects). */
export function processTree(root: number): number[] {
  const parents = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    const list = parents.get(ppid) ?? [];
    list.push(Number(name));
    parents.set(ppid, list);
  }
  const out: number[] = [];
  const queue = [root];
  while (queue.length) {
    const pid = queue.shift()!;
    out.push(pid);
    queue.push(...(parents.get(pid) ?? []));
  }
  return out;
}

/** User + system CPU of processes, in ms (processes that exited count 0). */
export function treeCpuMs(pids: number[]): number {
  let sum = 0;
  for (const pid of pids) {
    try {
      const { user, system } = cpuMs(pid);
      sum += user + system;
    } catch {
      /* exited */
    }
  }
  return sum;
}

/** Resident memory of processes in MB: now (VmRSS) and the sum of each one's peak (VmHWM). */
export function treeMemoryMb(pids: number[]): { rss: number; peak: number } {
  let rss = 0;
  let peak = 0;
  for (const pid of pids) {
    const m = memoryMb(pid);
    if (Number.isFinite(m.rss)) rss += m.rss;
    if (Number.isFinite(m.peak)) peak += m.peak;
  }
  return { rss, peak };
}
