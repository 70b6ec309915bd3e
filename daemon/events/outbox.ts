/**
 * Coalesced writes to SSE subscribers. Each write to a socket costs a system
 * call (and a wake-up of the reader); at a thousand subscribers and a hundred
 * events a second that is the whole CPU budget. So frames queue per
 * subscriber and one shared scheduler flushes every subscriber in rounds: at
 * once when nothing was flushed in the last window (no added latency at
 * low rates), else at the end of that window (several events per write at
 * high rates). Subscribers that are in step (the same run of the channel's
 * frames) share one encoded Buffer.
 *
 * At ten thousand subscribers a round is itself long (the kernel's send is
 * most of it), so a round yields to the event loop every SLICE_MS, letting
 * the API and the checks run between its slices, and the next round waits at
 * least as long as the last one was busy: the fan-out never takes more than
 * about half of the loop, however many subscribers, and the daemon slows its
 * events down instead of falling behind on everything else.
 */
/**
 * The window grows with the audience, so that sends stay near SEND_BUDGET a
 * second whatever the rate: 5 ms up to 100 subscribers, 50 ms from 1,000 on
 * (at most 50 ms added to any event's delivery while a round costs less).
 */
const MIN_WINDOW_MS = 5;
const MAX_WINDOW_MS = 50;
const SEND_BUDGET = 20_000;
/** A round's slice of the event loop before it lets other work in. */
const SLICE_MS = 8;
/** What every subscriber together may have unsent in the daemon: the per-subscriber bound shrinks to share it. */
const QUEUED_BUDGET = 512 * 2 ** 20;
/** The least any subscriber may have unsent: a few events behind, on top of its kernel buffers. */
const MIN_QUEUED = 32 * 1024;
let open = 0;

/**
 * The unsent bytes a subscriber may have before it is cut off: the setting,
 * but at most an even share of QUEUED_BUDGET (not below MIN_QUEUED). The
 * default 512 KiB holds to 1,000 subscribers; at 10,000 each may have 52 KiB,
 * so that ten thousand stalled readers hold 512 MiB, not 5 GiB.
 */
export function queueBound(setting: number, subscribers = open): number {
  return Math.min(setting, Math.max(MIN_QUEUED, Math.floor(QUEUED_BUDGET / Math.max(1, subscribers))));
}

export function windowMs(): number {
  return Math.min(MAX_WINDOW_MS, Math.max(MIN_WINDOW_MS, (open * 1000) / SEND_BUDGET));
}

export class Outbox {
  readonly channel: string;
  readonly #write: (chunk: Buffer | string) => void;
  #closed = false;
  frames: string[] = [];
  /** Every queued frame is the channel's own frame, seqs first..last without a gap. */
  shared = true;
  first = 0;
  last = 0;

  constructor(channel: string, write: (chunk: Buffer | string) => void) {
    this.channel = channel;
    this.#write = write;
    open++;
  }

  /** Queues a frame; `seq` only for the channel's shared frame of that event (not a per-subscriber view). */
  push(frame: string, seq?: number): void {
    if (this.frames.length === 0) {
      this.shared = seq !== undefined;
      this.first = seq ?? 0;
    } else if (seq === undefined || seq !== this.last + 1) {
      this.shared = false;
    }
    this.last = seq ?? this.last;
    this.frames.push(frame);
    dirty.add(this);
    schedule();
  }

  /** Forgets what is queued (the subscriber is gone). */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    open--;
    this.frames = [];
    dirty.delete(this);
  }

  flushWith(cache: Map<string, Buffer>): void {
    const frames = this.frames;
    this.frames = [];
    if (frames.length === 0) return;
    let chunk: Buffer | string;
    if (this.shared) {
      const key = `${this.channel}\n${this.first}\n${this.last}`;
      let buffer = cache.get(key);
      if (!buffer) {
        buffer = Buffer.from(frames.length === 1 ? frames[0] : frames.join(''));
        cache.set(key, buffer);
      }
      chunk = buffer;
    } else {
      chunk = frames.join('');
    }
    this.#write(chunk);
  }
}

const dirty = new Set<Outbox>();
let scheduled = false;
/** When the last round ended, and how long its slices kept the loop busy. */
let lastEnd = 0;
let lastBusy = 0;
/** The round under way: its subscribers, the next one to flush, its time so far, its shared buffers. */
let round: Outbox[] = [];
let next = 0;
let busy = 0;
let cache = new Map<string, Buffer>();

function schedule(): void {
  if (scheduled) return;
  scheduled = true;
  const wait = lastEnd + Math.max(windowMs(), lastBusy) - performance.now();
  // setImmediate even when due: events published in the same tick (a cascade) leave in one write.
  if (wait <= 0) setImmediate(startRound);
  else setTimeout(startRound, wait);
}

function startRound(): void {
  round = [...dirty];
  dirty.clear();
  next = 0;
  busy = 0;
  cache = new Map();
  slice();
}

/** Flushes the round's subscribers until SLICE_MS have passed, then lets the loop run and goes on. */
function slice(): void {
  const started = performance.now();
  let now = started;
  while (next < round.length) {
    const box = round[next++];
    dirty.delete(box);
    box.flushWith(cache);
    // The clock is read every 64 sends: reading it costs about as much as a send's JavaScript.
    if ((next & 63) === 0 && (now = performance.now()) - started >= SLICE_MS) break;
  }
  now = performance.now();
  busy += now - started;
  if (next < round.length) {
    setImmediate(slice);
    return;
  }
  round = [];
  cache = new Map();
  lastEnd = now;
  lastBusy = busy;
  scheduled = false;
  // Frames queued during the round for subscribers already flushed wait for the next one.
  if (dirty.size > 0) schedule();
}
