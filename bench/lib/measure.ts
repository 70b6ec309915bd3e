import { readFileSync } from 'node:fs';

/**
 * Figures the benches read from outside the processes they measure: /proc
 * (Linux) and the daemon's Prometheus text. One reader for every bench, so
 * that they all count the same way.
 */

/** Memory of a process in MB from /proc/PID/status: resident now (VmRSS) and its peak (VmHWM); NaN once it is gone. */
export function memoryMb(pid: number): { rss: number; peak: number; anon: number; file: number } {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return { rss: Number.NaN, peak: Number.NaN, anon: Number.NaN, file: Number.NaN };
  }
  const mb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN) / 1024;
  // RssFile: pages of the executable and libraries mapped in (clean, shared with the page cache); RssAnon: the process's own memory.
  return { rss: mb('VmRSS'), peak: mb('VmHWM'), anon: mb('RssAnon'), file: mb('RssFile') };
}

export const rssMb = (pid: number): number => memoryMb(pid).rss;

/** CPU time a process has used so far, in ms (user and system; the kernel counts 10 ms ticks). Unlike wall time, a busy machine does not inflate it. */
export function cpuMs(pid: number): { user: number; system: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // After the command name, which may itself hold spaces and parentheses.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { user: Number(fields[11]) * 10, system: Number(fields[12]) * 10 };
}

/** CPU seconds so far and memory now (MB) of one process, as the benches print them. */
export function procStat(pid: number): { cpuSeconds: number; rssMb: number; peakMb: number; anonMb: number; fileMb: number } {
  const { user, system } = cpuMs(pid);
  const { rss, peak, anon, file } = memoryMb(pid);
  return { cpuSeconds: (user + system) / 1000, rssMb: rss, peakMb: peak, anonMb: anon, fileMb: file };
}

/** Sum of every sample of one metric family in a Prometheus text exposition; a name with labels (`x{space="old"}`) selects that one series. */
export function metricSum(text: string, name: string): number {
  const prefixes = name.endsWith('}') ? [`${name} `] : [`${name}{`, `${name} `];
  let sum = 0;
  for (const line of text.split('\n')) {
    if (prefixes.some((p) => line.startsWith(p))) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

/** Waits until `windowMs` after `since` (epoch ms), sampling the RSS of `pid` each second; resolves with the largest seen, MB. */
export async function maxRssOver(pid: number, since: number, windowMs: number, startMb: number): Promise<number> {
  let max = startMb;
  while (Date.now() - since < windowMs) {
    await new Promise((r) => setTimeout(r, Math.min(1000, windowMs - (Date.now() - since))));
    max = Math.max(max, procStat(pid).rssMb);
  }
  return max;
}
