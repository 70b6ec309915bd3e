/**
 * What the bench modules of bench/probe-types.ts share: a child process that runs a module's own
 * file in a mode (targets or baseline) and talks over IPC, and the paced loop of a baseline.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { createSocket } from 'node:dgram';

/** A child running `file` with `args`, its first IPC message resolved; `request()` asks it for more. */
export interface Child<T> {
  first: T;
  proc: ChildProcess;
  /** Sends `message` and resolves with the child's next message. */
  request<R>(message: unknown): Promise<R>;
  stop(): Promise<void>;
}

export async function startChild<T>(file: string, args: string[]): Promise<Child<T>> {
  const proc = fork(file, args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv: ['--disable-warning=ExperimentalWarning'] });
  process.on('exit', () => proc.kill('SIGKILL'));
  const next = <R>() =>
    new Promise<R>((resolve, reject) => {
      proc.once('message', (m) => resolve(m as R));
      proc.once('exit', (code) => reject(new Error(`${file} ${args.join(' ')} exited with ${code}`)));
    });
  const first = await next<T>();
  return {
    first,
    proc,
    request: <R>(message: unknown) => {
      const answer = next<R>();
      proc.send(message as object);
      return answer;
    },
    stop: async () => {
      if (proc.exitCode !== null) return;
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGTERM');
      await exited;
    },
  };
}

/** Runs a baseline child to its end: it sends `{cpuMs, checks}` once done. */
export async function runBaselineChild(file: string, args: string[]): Promise<{ cpuMs: number; checks: number }> {
  const child = await startChild<{ cpuMs: number; checks: number }>(file, args);
  await child.stop();
  return child.first;
}

/**
 * In a baseline child: calls `check(i)` for i = 0, 1, … at `perSecond`, evenly spaced as the
 * scheduler spreads resources, for `seconds`, then waits for those under way and sends the
 * process's CPU (user + system, ms) and the checks that succeeded to the parent.
 */
export async function pacedBaseline(perSecond: number, seconds: number, check: (i: number) => Promise<boolean>): Promise<void> {
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  const slotMs = 1000 / perSecond;
  let sent = 0;
  let ok = 0;
  const inflight = new Set<Promise<void>>();
  while (performance.now() - start < seconds * 1000) {
    const dueNow = Math.floor((performance.now() - start) / slotMs);
    while (sent <= dueNow) {
      const p = check(sent++).then(
        (good) => void (good && ok++),
        () => undefined,
      );
      inflight.add(p);
      void p.finally(() => inflight.delete(p));
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  await Promise.all(inflight);
  const cpu = process.cpuUsage(cpu0);
  process.send!({ cpuMs: (cpu.user + cpu.system) / 1000, checks: ok });
}

/** Whether this module was run as the child's entry point (not imported by bench/probe-types.ts). */
export const isEntry = (metaFilename: string): boolean => process.argv[1] === metaFilename;

/**
 * In a target child: `count` UDP servers on 127.0.0.1, each datagram answered with what `answer`
 * returns (null: none). Sends the ports to the parent, then the datagrams answered so far on each
 * message it gets (ProbeTypeTargets.answered()).
 */
export async function serveUdp(count: number, answer: (msg: Buffer) => Buffer | null): Promise<void> {
  let answered = 0;
  const ports: number[] = [];
  for (let s = 0; s < count; s++) {
    const socket = createSocket('udp4');
    socket.on('message', (msg, rinfo) => {
      const reply = answer(msg);
      if (!reply) return;
      socket.send(reply, rinfo.port, rinfo.address);
      answered++;
    });
    await new Promise<void>((r) => socket.bind(0, '127.0.0.1', r));
    ports.push(socket.address().port);
  }
  process.on('message', () => process.send!(answered));
  process.send!(ports);
}

/**
 * One bare check of a baseline: `payload` out from a fresh connected socket to 127.0.0.1:`port`
 * (as the daemon's probe opens one per check), true when a datagram back passes `ok`.
 */
export function roundTrip(port: number, payload: Buffer | string, ok: (answer: Buffer) => boolean): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createSocket('udp4');
    const timer = setTimeout(() => done(false), 5_000);
    function done(good: boolean) {
      clearTimeout(timer);
      socket.close();
      resolve(good);
    }
    socket.on('error', () => done(false));
    socket.on('message', (msg) => done(ok(msg)));
    socket.connect(port, '127.0.0.1', () => socket.send(payload));
  });
}
