import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { request } from 'undici';
import type { TargetStats } from './check-targets.ts';
import { fmt } from './load.ts';
import { createResources } from './resources.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface Background {
  /** What was set up, for the bench's header. */
  readonly describe: string;
  /** Starts a window: its `end()` says how many checks the targets saw in it against how many were due. */
  window(): Promise<{ end(): Promise<string> }>;
  stop(): void;
}

/** The target servers of bench/lib/check-targets.ts in a child process, and their counts. */
export async function startTargets(count: number, interval: number) {
  const child: ChildProcess = spawn(
    process.execPath,
    ['--disable-warning=ExperimentalWarning', join(import.meta.dirname, 'check-targets.ts'), String(count), String(interval)],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const stop = () => child.kill('SIGTERM');
  process.on('exit', stop);
  const { ports } = JSON.parse(await new Promise<string>((resolve) => child.stdout!.once('data', (d) => resolve(String(d))))) as {
    ports: number[];
  };
  const stats = async () => JSON.parse(await (await request(`http://127.0.0.1:${ports[0]}/__stats`)).body.text()) as TargetStats;
  return { ports, stats, stop };
}

/**
 * N more HTTP resources checked every S seconds while a bench measures
 * something else: T target servers in a child process (check-targets.ts, so
 * that answering the checks is not the measuring process's CPU), a share
 * `flapping` of them changing status on every check, the resources created
 * through `createResources`, and every one checked once before `window()` is
 * used (the schedule is then steady).
 */
export async function startBackground(
  daemon: { url: string; adminKey: string },
  n: number,
  interval: number,
  opts: { flapping?: number; targets?: number } = {},
): Promise<Background> {
  const { ports, stats, stop } = await startTargets(opts.targets ?? 8, interval);
  try {
    // Every 1/flapping-th resource answers 503 on every other check: a status change per check, on no page.
    const every = opts.flapping ? Math.max(1, Math.round(1 / opts.flapping)) : 0;
    const flaps = every ? Math.ceil(n / every) : 0;
    const createdIn = await createResources(daemon.url, daemon.adminKey, n, (i) => ({
      name: `background-${i}`,
      resourceType: 'HTTP',
      target: `http://127.0.0.1:${ports[i % ports.length]}/${every && i % every === 0 ? 'flap' : 'bg'}/${i}`,
      intervalSeconds: interval,
    }));
    const started = Date.now();
    for (let last = 0; (await stats()).distinct < n; ) {
      if (Date.now() - last > 10_000) {
        last = Date.now();
        process.stderr.write(`background: ${(await stats()).distinct} of ${n} checked once\n`);
      }
      await sleep(500);
    }
    const describe =
      `${n} background HTTP resources every ${interval} s on ${ports.length} local targets (a separate process), ` +
      `${flaps} of them flapping (a status change per check, on no page): ` +
      `created in ${fmt(createdIn)} s, all checked once ${fmt((Date.now() - started) / 1000)} s later`;
    return {
      describe,
      stop,
      async window() {
        const t0 = Date.now();
        const before = (await stats()).total;
        return {
          async end() {
            const done = (await stats()).total - before;
            const seconds = (Date.now() - t0) / 1000;
            const due = (n * seconds) / interval;
            return (
              `background checks in the ${fmt(seconds)} s measured: ${fmt(done, 0)} done of ${fmt(due, 0)} due (${fmt((100 * done) / due)} %), ` +
              `about ${fmt((flaps * seconds) / interval, 0)} status changes of resources on no page`
            );
          },
        };
      },
    };
  } catch (err) {
    stop();
    throw err;
  }
}
