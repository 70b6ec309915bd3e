/**
 * SSE subscribers for the soak run, in a worker thread so that hundreds of
 * streams are read promptly however busy the driver's own thread is (a slow
 * reader is cut off by the daemon, and that would be the client's fault).
 * Raw sockets and a frame counter: the daemon is under test, not a client library.
 */
import { connect, type Socket } from 'node:net';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';

export interface SubscriberSpec {
  path: string;
  count: number;
  headers: Record<string, string>;
  /** The stream opens with a `SNAPSHOT` (default); otherwise the 200 alone makes it ready. */
  snapshot?: boolean;
}
interface Input {
  url: string;
  specs: SubscriberSpec[];
}

/** One subscriber's state, as reported to the driver. */
export interface SubscriberState {
  path: string;
  status: number;
  /** Saw its opening `SNAPSHOT`. */
  ready: boolean;
  events: number;
  pings: number;
  closed: string | null;
  /** Saw the frame carrying the current marker. */
  marked: boolean;
}

type Request = { type: 'status' } | { type: 'mark'; markers: Record<string, string> } | { type: 'close' };

if (!isMainThread && (workerData as { soakSubscribers?: Input })?.soakSubscribers)
  runWorker((workerData as { soakSubscribers: Input }).soakSubscribers);

function runWorker({ url, specs }: Input): void {
  const target = new URL(url);
  const states: SubscriberState[] = [];
  const sockets: Socket[] = [];
  let markers: Record<string, RegExp> = {};
  let closing = false;
  const queue = specs.flatMap((spec) => Array.from({ length: spec.count }, () => spec));
  // A few connecting at a time: a burst of hundreds overflows the listen backlog.
  const openNext = () => {
    const spec = queue.shift();
    if (spec) open(spec);
  };
  for (let i = 0; i < 20; i++) openNext();

  function open(spec: SubscriberSpec) {
    const state: SubscriberState = { path: spec.path, status: 0, ready: false, events: 0, pings: 0, closed: null, marked: false };
    states.push(state);
    const socket = connect(Number(target.port), target.hostname);
    sockets.push(socket);
    let buffer = '';
    let head = true;
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      if (head) {
        const end = buffer.indexOf('\r\n\r\n');
        if (end < 0) return;
        state.status = Number(/^HTTP\/1\.1 (\d{3})/.exec(buffer)?.[1] ?? 0);
        buffer = buffer.slice(end + 4);
        head = false;
        if (state.status !== 200) return socket.destroy();
        if (spec.snapshot === false) {
          state.ready = true;
          openNext();
        }
      }
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        if (frame.startsWith(':')) {
          state.pings++;
          continue;
        }
        if (!state.ready) {
          if (frame.includes('\nevent: SNAPSHOT\n')) {
            state.ready = true;
            openNext();
          }
          continue;
        }
        state.events++;
        const marker = markers[spec.path];
        if (marker && !state.marked && marker.test(frame)) state.marked = true;
      }
    });
    socket.on('error', (err) => {
      if (!state.closed && !closing) state.closed = `error: ${err.message}`;
    });
    socket.on('close', () => {
      if (!state.closed && !closing) state.closed = `closed by the server (status ${state.status}, ${state.events} events)`;
      if (!state.ready) openNext();
    });
    const headers = Object.entries({ host: target.host, accept: 'text/event-stream', ...spec.headers })
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('');
    socket.write(`GET ${spec.path} HTTP/1.1\r\n${headers}\r\n`);
  }

  parentPort!.on('message', (msg: Request) => {
    if (msg.type === 'mark') {
      markers = Object.fromEntries(Object.entries(msg.markers).map(([path, m]) => [path, new RegExp(m)]));
      for (const s of states) s.marked = false;
    }
    if (msg.type === 'close') {
      closing = true;
      for (const s of sockets) s.destroy();
    }
    parentPort!.postMessage(states);
  });
}

/** The driver's handle on the worker: every call answers with every subscriber's state. */
export interface Subscribers {
  status(): Promise<SubscriberState[]>;
  /** Sets, per path, a regular expression that the next marker frame matches; clears `marked`. */
  mark(markers: Record<string, string>): Promise<SubscriberState[]>;
  close(): Promise<SubscriberState[]>;
}

export function startSubscribers(url: string, specs: SubscriberSpec[]): Subscribers {
  const worker = new Worker(new URL(import.meta.url), { workerData: { soakSubscribers: { url, specs } } });
  let failure: Error | undefined;
  worker.on('error', (err) => (failure = err));
  worker.once('exit', () => (failure ??= new Error('the subscriber worker has exited')));
  // One question at a time, so that each answer goes to its own caller.
  let chain: Promise<unknown> = Promise.resolve();
  const ask = (msg: Request) => {
    const next = chain.then(
      () =>
        new Promise<SubscriberState[]>((resolve, reject) => {
          if (failure) return reject(failure);
          worker.once('message', resolve);
          worker.postMessage(msg);
        }),
    );
    chain = next.catch(() => {});
    return next;
  };
  return {
    status: () => ask({ type: 'status' }),
    mark: (markers) => ask({ type: 'mark', markers }),
    async close() {
      const states = await ask({ type: 'close' });
      await worker.terminate();
      return states;
    },
  };
}
