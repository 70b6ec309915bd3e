/**
 * A channel of events with monotonically increasing sequence ids and a bounded
 * replay buffer. One hub holds every channel (topology, each route's log,
 * monitoring events); the SSE helper turns a channel into a stream.
 *
 * Sequence ids start from the wall clock at creation, so ids from before a
 * restart are always older than the new buffer and the client gets a fresh
 * SNAPSHOT instead of a wrong replay.
 */
export interface HubEvent {
  seq: number;
  kind: string;
  data: unknown;
  /** The SSE frame, serialised once and shared by every subscriber. */
  readonly frame: string;
}

export type Listener = (event: HubEvent) => void;

/**
 * Pods on one PostgreSQL database (daemon/cluster/event-relay.ts): the
 * channels it names are numbered by the database and delivered to every pod,
 * so that a subscriber of any pod sees every pod's events and resumes on any
 * pod with Last-Event-ID.
 */
export interface ChannelRelay {
  /** Whether the channel is cluster-wide (else it stays this pod's, numbered here). */
  covers(name: string): boolean;
  /** The channel's last number when this pod started (or learned it after a gap). */
  seqOf(name: string): number;
  publish(name: string, kind: string, data: unknown): void;
}

export function sseFrame(seq: number, kind: string, data: unknown): string {
  return `id: ${seq}\nevent: ${kind}\ndata: ${JSON.stringify(data)}\n\n`;
}

/**
 * The frame is serialised on first use: a channel nobody watches (per-request
 * tunnel events with no topology viewer) then costs no JSON at all, yet a
 * client reconnecting with Last-Event-ID still gets its replay.
 */
class LazyEvent implements HubEvent {
  readonly seq: number;
  readonly kind: string;
  readonly data: unknown;
  #frame: string | undefined;

  constructor(seq: number, kind: string, data: unknown) {
    this.seq = seq;
    this.kind = kind;
    this.data = data;
  }

  get frame(): string {
    return (this.#frame ??= sseFrame(this.seq, this.kind, this.data));
  }
}

export class Channel {
  readonly #closeHandlers = new Set<() => void>();
  readonly name: string;
  readonly #buffer: HubEvent[] = [];
  readonly #capacity: number;
  /** Listener → whether it wants the numbered stream (SSE) rather than this pod's events at once (caches). */
  readonly #listeners = new Map<Listener, boolean>();
  readonly #relay: ChannelRelay | undefined;
  #seq: number;

  constructor(name: string, capacity: number, relay?: ChannelRelay) {
    this.name = name;
    this.#capacity = capacity;
    this.#relay = relay;
    this.#seq = relay ? relay.seqOf(name) : Date.now();
  }

  get seq(): number {
    return this.#seq;
  }

  get subscriberCount(): number {
    return this.#listeners.size;
  }

  /**
   * Publishes an event. On a cluster-wide channel, this pod's listeners that
   * are not `numbered` (caches) get it at once; the number comes from the
   * database, and every pod's numbered listeners get it through `deliver`.
   */
  publish(kind: string, data: unknown): HubEvent {
    if (this.#relay) {
      const event: HubEvent = new LazyEvent(NaN, kind, data);
      for (const [listener, numbered] of this.#listeners) if (!numbered) listener(event);
      this.#relay.publish(this.name, kind, data);
      return event;
    }
    const seq = ++this.#seq;
    const event: HubEvent = new LazyEvent(seq, kind, data);
    this.#buffer.push(event);
    if (this.#buffer.length > this.#capacity) this.#buffer.shift();
    for (const listener of this.#listeners.keys()) listener(event);
    return event;
  }

  /**
   * A numbered event of a cluster-wide channel, in order (from any pod;
   * `own`: published here, so the caches already had it). A number that does
   * not follow the last one means events were missed: the replay buffer
   * restarts and numbered streams end (their clients reconnect for a SNAPSHOT).
   */
  deliver(seq: number, kind: string, data: unknown, own: boolean): void {
    if (seq <= this.#seq) return;
    if (seq !== this.#seq + 1) this.restart(seq - 1);
    this.#seq = seq;
    const event: HubEvent = new LazyEvent(seq, kind, data);
    this.#buffer.push(event);
    if (this.#buffer.length > this.#capacity) this.#buffer.shift();
    for (const [listener, numbered] of this.#listeners) if (numbered || !own) listener(event);
  }

  /** Events were missed (or may have been): forget the replay, end the numbered streams, go on from `seq`. */
  restart(seq: number): void {
    this.#buffer.length = 0;
    this.#seq = Math.max(this.#seq, seq);
    for (const handler of [...this.#closeHandlers]) handler();
  }

  /**
   * Events after `lastSeq`, or undefined when the buffer no longer reaches
   * back that far (or the id is from the future): the caller sends a SNAPSHOT.
   */
  since(lastSeq: number): HubEvent[] | undefined {
    if (lastSeq > this.#seq) return undefined;
    if (lastSeq === this.#seq) return [];
    const oldest = this.#buffer[0];
    if (!oldest || oldest.seq > lastSeq + 1) return undefined;
    return this.#buffer.slice(lastSeq + 1 - oldest.seq);
  }

  /**
   * `numbered`: the listener serves a stream (seq order, every pod's events
   * on a cluster-wide channel); else it is told of this pod's publications at
   * once and of other pods' as they arrive. The same on one daemon.
   */
  listen(listener: Listener, numbered = false): () => void {
    this.#listeners.set(listener, numbered);
    return () => this.#listeners.delete(listener);
  }

  /** Called when the channel closes (its subject is gone) or restarts after missed events: streams on it end. */
  onClose(handler: () => void): () => void {
    this.#closeHandlers.add(handler);
    return () => this.#closeHandlers.delete(handler);
  }

  close(): void {
    for (const handler of [...this.#closeHandlers]) handler();
    this.#closeHandlers.clear();
    this.#listeners.clear();
    this.#buffer.length = 0;
  }
}

/** All channels of one daemon, created on first use. */
export class EventHub {
  readonly #channels = new Map<string, Channel>();
  readonly #capacity: number;
  #relay: ChannelRelay | undefined;

  constructor(capacity = 1000) {
    this.#capacity = capacity;
  }

  /** Pods: the channels the relay covers become cluster-wide (set before any channel is used). */
  set relay(relay: ChannelRelay) {
    this.#relay = relay;
  }

  channel(name: string): Channel {
    let channel = this.#channels.get(name);
    if (!channel) {
      channel = new Channel(name, this.#capacity, this.#relay?.covers(name) ? this.#relay : undefined);
      this.#channels.set(name, channel);
    }
    return channel;
  }

  /** Whether the channel exists (someone watches it, or did recently). */
  has(name: string): boolean {
    return this.#channels.has(name);
  }

  /** Closes a channel and forgets it: its streams end, its buffer is freed. */
  drop(name: string): void {
    this.#channels.get(name)?.close();
    this.#channels.delete(name);
  }

  /**
   * Forgets a channel once nobody has listened to it for `idleMs`, so that an
   * unwatched route log costs nothing; a quick reconnect still gets its replay.
   */
  dropWhenIdle(name: string, idleMs: number): void {
    const channel = this.#channels.get(name);
    if (!channel || channel.subscriberCount > 0) return;
    const timer = setTimeout(() => {
      if (this.#channels.get(name) === channel && channel.subscriberCount === 0) this.drop(name);
    }, idleMs);
    timer.unref();
  }

  /** Publishes only if the channel exists: per-route logs nobody watches cost nothing. */
  publishIfWatched(name: string, kind: string, data: unknown): void {
    this.#channels.get(name)?.publish(kind, data);
  }

  get subscriberCount(): number {
    let n = 0;
    for (const channel of this.#channels.values()) n += channel.subscriberCount;
    return n;
  }
}
