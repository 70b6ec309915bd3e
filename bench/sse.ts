/**
 * SSE fan-out: N subscribers (default 1,000) on `/admin/sse/topology`, R
 * events per second (default 100, each a real `PUT /admin/api/routes/{id}`),
 * for S seconds. Reports the delivery latency from the emitting request to
 * each subscriber (p50/p99 of all deliveries, and p99 of the time until the
 * LAST subscriber has an event), and the daemon's RSS per subscriber: the
 * difference between steady states with N/2 and N subscribers, events flowing
 * in both. Targets: p99 < 100 ms, < 50 KB per subscriber.
 *
 *   npm run bench:sse -- --subscribers 1000 --rate 100 --seconds 10 --workers 2
 *
 * Both processes need a descriptor per subscriber: Node raises its soft limit to
 * the hard one (`ulimit -Hn`), which the bench checks first.
 *
 * Subscribers are raw sockets in worker threads (a full EventSource per
 * subscriber would measure the client, not the daemon). Latency starts when
 * the PUT is sent, so it includes the request's own handling: an upper bound.
 */
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { cpuMs, metricSum, rssMb } from './lib/measure.ts';

const now = () => performance.timeOrigin + performance.now();

interface WorkerInput {
  url: string;
  key: string;
  count: number;
}
interface WorkerReport {
  seq: number[];
  latency: number[];
  connected: number;
  closed: number;
}

if (!isMainThread) runWorker(workerData as WorkerInput);
else await main();

/** One worker: `count` subscribers, more on `{ grow: n }`; reports how many saw their SNAPSHOT, then every delivery. */
function runWorker({ url, key, count: initial }: WorkerInput): void {
  let count = initial;
  const target = new URL(url);
  const seqs: number[] = [];
  const latencies: number[] = [];
  let connected = 0;
  let closed = 0;
  // A few connecting at a time: a burst of hundreds overflows the listen backlog and measures SYN retries.
  let opened = 0;
  const openNext = () => {
    if (opened >= count) return;
    opened++;
    open();
  };
  for (let i = 0; i < 20; i++) openNext();
  function open() {
    const socket = connect(Number(target.port), target.hostname);
    let buffer = '';
    let snapshot = false;
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      const at = now();
      buffer += chunk;
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        if (!snapshot && frame.includes('event: SNAPSHOT')) {
          snapshot = true;
          connected++;
          openNext();
          continue;
        }
        const m = /\/t\/(\d+)\/(\d+)/.exec(frame);
        if (m) {
          seqs.push(Number(m[2]));
          latencies.push(at - Number(m[1]) / 1000);
        }
      }
    });
    socket.on('close', () => closed++);
    socket.on('error', () => {});
    socket.write(`GET /admin/sse/topology HTTP/1.1\r\nHost: ${target.host}\r\nX-API-KEY: ${key}\r\nAccept: text/event-stream\r\n\r\n`);
  }
  parentPort!.on('message', (msg: string | { grow: number }) => {
    if (typeof msg === 'object') {
      count = msg.grow;
      for (let i = 0; i < 20; i++) openNext();
      return;
    }
    if (msg === 'status') parentPort!.postMessage({ connected, closed });
    if (msg === 'report') parentPort!.postMessage({ seq: seqs, latency: latencies, connected, closed } satisfies WorkerReport);
  });
}

// Function declarations: main() runs (top-level await above) before later consts exist.
function rssKb(pid: number): number {
  return rssMb(pid) * 1024;
}

function cpuSeconds(pid: number): number {
  const { user, system } = cpuMs(pid);
  return (user + system) / 1000;
}

function percentile(sorted: number[], p: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : NaN;
}

async function main(): Promise<void> {
  const { flag, fmt } = await import('./lib/load.ts');
  const { startDaemon } = await import('../test/helpers/daemon.ts');
  const subscribers = flag('subscribers', 1000);
  const rate = flag('rate', 100);
  const seconds = flag('seconds', 10);
  // One client thread per 2,500 subscribers (at least 2): at 10,000 two threads' reads lag the daemon's sends.
  const workers = flag('workers', Math.max(2, Math.ceil(subscribers / 2500)));
  // Node raises its soft descriptor limit to the hard one at start; each side needs one per subscriber.
  const hardLimit = Number(/^Max open files\s+\S+\s+(\S+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1] ?? Infinity);
  if (hardLimit < subscribers + 512) {
    throw new Error(
      `${subscribers} subscribers need about ${subscribers + 512} descriptors on each side; the hard limit is ${hardLimit} (ulimit -Hn)`,
    );
  }
  const daemon = await startDaemon({ env: { MONCTL_CHECK_RESPONSES: '0' } });
  const threads: Worker[] = [];
  try {
    const headers = { 'x-api-key': daemon.adminKey, 'content-type': 'application/json' };
    // A few kept-alive connections for the emitting requests, with patience for a loaded machine.
    const { Agent, request } = await import('undici');
    const dispatcher = new Agent({ connections: 8, connectTimeout: 60_000, keepAliveTimeout: 2_000 });
    const call = async (method: string, path: string, body: unknown) => {
      const res = await request(daemon.url + path, { method: method as 'PUT', headers, body: JSON.stringify(body), dispatcher });
      const text = await res.body.text();
      if (res.statusCode !== 200) throw new Error(`${method} ${path}: ${res.statusCode} ${text}`);
      return JSON.parse(text) as { id: number };
    };
    const agent = await call('POST', '/admin/api/agents', { name: 'bench-agent' });
    const route = await call('POST', '/admin/api/routes', {
      name: 'bench',
      type: 'HTTP',
      agentId: agent.id,
      hostname: 'bench.test',
      target: 'http://x/',
    });
    const responseMs: number[] = [];
    const emit = async (seq: number) => {
      const sent = now();
      await call('PUT', `/admin/api/routes/${route.id}`, { target: `http://x/t/${Math.round(sent * 1000)}/${seq}` });
      if (seq >= 0) responseMs.push(now() - sent);
    };

    // The baseline: the same paced emission with nobody subscribed. It fills the hub's replay
    // buffer and grows the daemon's heap as handling R writes a second does, so that the RSS
    // difference below is what the subscribers cost, not what the emitting requests cost.
    // RSS during an emission phase: the median of its second half, which the GC sawtooth moves far
    // less than a single reading at the end.
    const sampledRss = async (phase: Promise<unknown>) => {
      const samples: number[] = [];
      const timer = setInterval(() => samples.push(rssKb(daemon.proc.pid!)), 200);
      await phase;
      clearInterval(timer);
      const late = samples.slice(Math.floor(samples.length / 2)).sort((a, b) => a - b);
      return late[Math.floor(late.length / 2)] ?? rssKb(daemon.proc.pid!);
    };
    // Where the memory is, from the daemon's own metrics: V8 heap used and committed, and external.
    const heapFigures = async () => {
      const text = await (await fetch(`${daemon.url}/actuator/prometheus`)).text();
      const mb = (name: string) => metricSum(text, name) / 2 ** 20;
      return (
        `heap used ${fmt(mb('nodejs_heap_size_used_bytes'))} MB, committed ${fmt(mb('nodejs_heap_size_total_bytes'))} MB ` +
        `(new ${fmt(mb('nodejs_heap_space_size_total_bytes{space="new"}'))}, old ${fmt(mb('nodejs_heap_space_size_total_bytes{space="old"}'))}), ` +
        `external ${fmt(mb('nodejs_external_memory_bytes'))} MB`
      );
    };
    const pace = async (count: number, seqOf: (i: number) => number) => {
      const start = now();
      const pending: Promise<unknown>[] = [];
      for (let i = 0; i < count; i++) {
        const wait = start + (i * 1000) / rate - now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        pending.push(emit(seqOf(i)));
      }
      await Promise.all(pending);
    };
    await pace(Math.max(1100, rate * seconds), () => -1);
    await new Promise((r) => setTimeout(r, 500));
    const baseRss = rssKb(daemon.proc.pid!);

    // Subscribers connect in two halves, each followed by paced emission: the RSS difference
    // between the two steady states is what one more subscriber costs with events flowing, free
    // of the heap the emission itself grows (the no-subscriber baseline above only bounds that).
    const half = Math.floor(subscribers / 2);
    const shares = (n: number) => Array.from({ length: workers }, (_, w) => Math.floor(n / workers) + (w < n % workers ? 1 : 0));
    shares(half).forEach((count) =>
      threads.push(new Worker(new URL(import.meta.url), { workerData: { url: daemon.url, key: daemon.adminKey, count } })),
    );
    const ask = (w: Worker, msg: string) =>
      new Promise<any>((resolve) => {
        w.once('message', resolve);
        w.postMessage(msg);
      });
    const waitConnected = async (want: number) => {
      const started = Date.now();
      for (;;) {
        const status = await Promise.all(threads.map((w) => ask(w, 'status')));
        const connected = status.reduce((n, s) => n + s.connected, 0);
        if (connected >= want) return;
        if (Date.now() - started > 120_000) throw new Error(`only ${connected} of ${want} subscribers got their SNAPSHOT`);
        process.stderr.write(`\rsubscribers connected: ${connected}   `);
        await new Promise((r) => setTimeout(r, 200));
      }
    };
    await waitConnected(half);
    process.stderr.write(`\rsubscribers connected: ${half}, emitting\n`);
    // As long as the measured phase, so that the two states are alike.
    const halfRss = await sampledRss(pace(rate * seconds, () => -1));
    const halfHeap = await heapFigures();
    shares(subscribers).forEach((count, w) => threads[w].postMessage({ grow: count }));
    await waitConnected(subscribers);
    const connectedRss = rssKb(daemon.proc.pid!);
    process.stderr.write(`\rsubscribers connected: ${subscribers}, emitting\n`);

    // R events per second, paced on a schedule (not back to back) for S seconds.
    const total = rate * seconds;
    const t0 = now();
    const cpu0 = cpuSeconds(daemon.proc.pid!);
    const benchCpu0 = process.cpuUsage();
    const activeRss = await sampledRss(pace(total, (seq) => seq));
    const activeHeap = await heapFigures();
    const elapsed = (now() - t0) / 1000;
    const daemonCpu = (cpuSeconds(daemon.proc.pid!) - cpu0) / elapsed;
    const benchCpuUse = process.cpuUsage(benchCpu0);
    const benchCpu = (benchCpuUse.user + benchCpuUse.system) / 1e6 / elapsed;
    await new Promise((r) => setTimeout(r, 2000)); // stragglers
    const reports: WorkerReport[] = await Promise.all(threads.map((w) => ask(w, 'report')));

    const all: number[] = [];
    const lastPerEvent = new Map<number, number>();
    const firstPerEvent = new Map<number, number>();
    const perEventCount = new Map<number, number>();
    for (const r of reports) {
      for (let i = 0; i < r.seq.length; i++) {
        if (r.seq[i] < 0) continue;
        all.push(r.latency[i]);
        lastPerEvent.set(r.seq[i], Math.max(lastPerEvent.get(r.seq[i]) ?? 0, r.latency[i]));
        firstPerEvent.set(r.seq[i], Math.min(firstPerEvent.get(r.seq[i]) ?? Infinity, r.latency[i]));
        perEventCount.set(r.seq[i], (perEventCount.get(r.seq[i]) ?? 0) + 1);
      }
    }
    all.sort((a, b) => a - b);
    const lasts = [...lastPerEvent.values()].sort((a, b) => a - b);
    // The hub's own share: from the first subscriber having the event (the publish) to the last.
    const spread = [...lastPerEvent].map(([seq, last]) => last - firstPerEvent.get(seq)!).sort((a, b) => a - b);
    const delivered = all.length;
    const expected = total * subscribers;
    const closed = reports.reduce((n, r) => n + r.closed, 0);
    const perSubKb = (connectedRss - baseRss) / subscribers;
    const perSubActiveKb = (activeRss - baseRss) / subscribers;
    const marginalKb = (activeRss - halfRss) / (subscribers - half);
    const marginalConnectedKb = (connectedRss - halfRss) / (subscribers - half);
    const p99All = percentile(all, 99);
    const p99Last = percentile(lasts, 99);

    console.log(`# SSE fan-out: ${subscribers} subscribers, ${rate} events/s for ${seconds} s (${workers} client threads)`);
    console.log(`deliveries: ${delivered} of ${expected} (${fmt((100 * delivered) / expected, 2)} %), subscribers closed: ${closed}`);
    console.log(`latency, all deliveries: p50 ${fmt(percentile(all, 50))} ms, p99 ${fmt(p99All)} ms, max ${fmt(all.at(-1) ?? NaN)} ms`);
    console.log(`latency until the last subscriber has the event: p50 ${fmt(percentile(lasts, 50))} ms, p99 ${fmt(p99Last)} ms`);
    console.log(`fan-out, first to last subscriber: p50 ${fmt(percentile(spread, 50))} ms, p99 ${fmt(percentile(spread, 99))} ms`);
    responseMs.sort((a, b) => a - b);
    console.log(`emitting PUT round trip: p50 ${fmt(percentile(responseMs, 50))} ms, p99 ${fmt(percentile(responseMs, 99))} ms`);
    const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
    console.log(
      `CPU while emitting: daemon ${fmt(daemonCpu * 100, 0)} % of a core (${fmt((daemonCpu * elapsed * 1e6) / Math.max(1, delivered), 2)} µs per delivery), ` +
        `bench clients ${fmt(benchCpu * 100, 0)} %; load average ${load}; descriptor limit ${hardLimit}`,
    );
    console.log(
      `daemon RSS: ${fmt(baseRss / 1024)} MB after the same emission with no subscriber, ${fmt(halfRss / 1024)} MB with ${half} subscribers and events (median), ` +
        `${fmt(connectedRss / 1024)} MB with ${subscribers} connected, ${fmt(activeRss / 1024)} MB with the events (median)`,
    );
    console.log(`daemon at the end of the ${half}-subscriber phase: ${halfHeap}`);
    console.log(`daemon at the end of the ${subscribers}-subscriber phase: ${activeHeap}`);
    console.log(
      `RSS per subscriber against no subscriber: ${fmt(perSubKb)} KB connected, ${fmt(perSubActiveKb)} KB with events flowing (includes the heap the fan-out's writes grow)`,
    );
    console.log(
      `RSS per subscriber, ${half} → ${subscribers}: ${fmt(marginalConnectedKb)} KB once connected, ${fmt(marginalKb)} KB after the events`,
    );
    console.log('metric | value | target | ratio (value/target, < 1 meets it)');
    console.log(`p99 to every subscriber | ${fmt(p99Last)} ms | 100 ms | ${fmt(p99Last / 100, 2)}`);
    console.log(`p99 of all deliveries | ${fmt(p99All)} ms | 100 ms | ${fmt(p99All / 100, 2)}`);
    console.log(
      `p99 fan-out (publish to last subscriber) | ${fmt(percentile(spread, 99))} ms | 100 ms | ${fmt(percentile(spread, 99) / 100, 2)}`,
    );
    console.log(
      `RSS per subscriber (${half} → ${subscribers}, events flowing) | ${fmt(marginalKb)} KB | 50 KB | ${fmt(marginalKb / 50, 2)}`,
    );
    if (delivered < expected) process.exitCode = 1;
  } catch (err) {
    console.error(`daemon stderr:\n${daemon.stderr()}\nlast logs: ${JSON.stringify(daemon.logs.slice(-5))}`);
    throw err;
  } finally {
    await Promise.all(threads.map((w) => w.terminate()));
    await daemon.stop();
  }
}
