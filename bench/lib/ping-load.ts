import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { Pool } from 'undici';

/**
 * The ping client of bench:push: an undici Pool in a worker thread (its timing is not
 * disturbed by the bench's own SSE reader), driving one origin with `GET <path>` over a
 * rotation of paths that may grow while it runs. Two jobs:
 * - `rate`: open loop at a fixed rate; each latency counts from when the request was due,
 *   not from when it was sent, so a server that falls behind cannot hide it (no coordinated
 *   omission). At most `maxInFlight` outstanding: past that, due requests are skipped and counted.
 * - `max`: closed loop, connections × pipelining requests always in flight, for the most a
 *   server answers.
 * The same client drives the daemon and the bare node:http baseline.
 */
export interface PingStats {
  seconds: number;
  sent: number;
  ok: number;
  /** Answers by status code (200 expected; 429 rate limited). */
  statuses: Record<string, number>;
  errors: number;
  skipped: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

type Command =
  | { type: 'paths'; paths: string[] }
  | { type: 'rate'; rate: number }
  | { type: 'max'; seconds: number }
  | { type: 'window' }
  | { type: 'stop' };

interface Options {
  origin: string;
  connections: number;
  pipelining: number;
  maxInFlight?: number;
}

/** Latencies and counts of one measuring window. */
class Window {
  private readonly started = performance.now();
  private latencies = new Float64Array(1 << 16);
  private count = 0;
  sent = 0;
  ok = 0;
  errors = 0;
  skipped = 0;
  readonly statuses: Record<string, number> = {};

  record(status: number | 'error', ms: number): void {
    if (status === 'error') this.errors++;
    else {
      this.statuses[status] = (this.statuses[status] ?? 0) + 1;
      if (status === 200) this.ok++;
    }
    if (this.count === this.latencies.length) {
      const grown = new Float64Array(this.latencies.length * 2);
      grown.set(this.latencies);
      this.latencies = grown;
    }
    this.latencies[this.count++] = ms;
  }

  stats(): PingStats {
    const sorted = this.latencies.slice(0, this.count).sort();
    const at = (q: number) => (this.count ? sorted[Math.min(this.count - 1, Math.ceil(q * this.count) - 1)] : Number.NaN);
    return {
      seconds: (performance.now() - this.started) / 1000,
      sent: this.sent,
      ok: this.ok,
      statuses: this.statuses,
      errors: this.errors,
      skipped: this.skipped,
      p50Ms: at(0.5),
      p99Ms: at(0.99),
      maxMs: this.count ? sorted[this.count - 1] : Number.NaN,
    };
  }
}

function serve(o: Options): void {
  const pool = new Pool(o.origin, { connections: o.connections, pipelining: o.pipelining, keepAliveTimeout: 60_000 });
  const paths: string[] = [];
  let next = 0;
  let inFlight = 0;
  let window = new Window();
  let running: 'rate' | 'max' | undefined;
  const path = () => {
    const p = paths[next];
    next = (next + 1) % paths.length;
    return p;
  };
  const one = async (dueAt: number) => {
    const w = window;
    w.sent++;
    inFlight++;
    try {
      const res = await pool.request({ path: path(), method: 'GET' });
      await res.body.dump();
      w.record(res.statusCode, performance.now() - dueAt);
    } catch {
      w.record('error', performance.now() - dueAt);
    } finally {
      inFlight--;
    }
  };
  const post = (msg: unknown) => parentPort!.postMessage(msg);

  parentPort!.on('message', async (cmd: Command) => {
    if (cmd.type === 'paths') paths.push(...cmd.paths);
    else if (cmd.type === 'window') {
      post(window.stats());
      window = new Window();
    } else if (cmd.type === 'stop') {
      running = undefined;
      const stats = window.stats();
      // What the open loop left queued would otherwise hold up the next job: wait for it (bounded).
      const until = performance.now() + 120_000;
      while (inFlight > 0 && performance.now() < until) await new Promise((r) => setTimeout(r, 10));
      window = new Window();
      post(stats);
    } else if (cmd.type === 'rate') {
      running = 'rate';
      const start = performance.now();
      const interval = 1000 / cmd.rate;
      let issued = 0;
      while (running === 'rate') {
        const due = Math.floor((performance.now() - start) / interval);
        for (; issued < due; issued++) {
          if (inFlight >= (o.maxInFlight ?? 10_000) || paths.length === 0) window.skipped++;
          else void one(start + issued * interval);
        }
        await new Promise((r) => setTimeout(r, 2));
      }
    } else if (cmd.type === 'max') {
      running = 'max';
      window = new Window();
      const until = performance.now() + cmd.seconds * 1000;
      const loop = async () => {
        while (running === 'max' && performance.now() < until) await one(performance.now());
      };
      await Promise.all(Array.from({ length: o.connections * o.pipelining }, loop));
      running = undefined;
      post(window.stats());
      window = new Window();
    }
  });
}

/** The main thread's handle on a ping client worker. */
export class PingLoad {
  private readonly worker: Worker;

  constructor(opts: Options) {
    this.worker = new Worker(import.meta.filename, { workerData: opts });
  }

  private ask(cmd: Command): Promise<PingStats> {
    return new Promise((resolve, reject) => {
      this.worker.once('message', resolve);
      this.worker.once('error', reject);
      this.worker.postMessage(cmd);
    });
  }

  addPaths(paths: string[]): void {
    this.worker.postMessage({ type: 'paths', paths } satisfies Command);
  }

  /** Starts the open loop; `window()` reads its figures so far and starts a new window. */
  startRate(rate: number): void {
    this.worker.postMessage({ type: 'rate', rate } satisfies Command);
  }

  window(): Promise<PingStats> {
    return this.ask({ type: 'window' });
  }

  /** Stops the open loop and returns its last window, once the requests it left in flight have ended. */
  stop(): Promise<PingStats> {
    return this.ask({ type: 'stop' });
  }

  /** The closed loop for `seconds`; the open loop must be stopped first. */
  max(seconds: number): Promise<PingStats> {
    return this.ask({ type: 'max', seconds });
  }

  close(): Promise<number> {
    return this.worker.terminate();
  }
}

if (!isMainThread && workerData?.origin) serve(workerData as Options);
