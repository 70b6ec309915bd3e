import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import { FRAME, FrameReader, MAX_DATA_FRAME } from './frame.ts';
import { MuxStream, type StreamHost, StreamError } from './stream.ts';
import { FIXED_WINDOW, grownWindow, type StreamWindows } from './windows.ts';
import { FrameWriter } from './writer.ts';

export { STREAM_WINDOW, STREAM_WINDOW_INITIAL } from './windows.ts';
/** Receive window of the whole connection, shared by its streams. */
export const CONNECTION_WINDOW = 32 * 1024 * 1024;
/** Credit goes back in steps of at least this much (a WINDOW frame per small read would cost more). */
const STREAM_RETURN_STEP = 64 * 1024;
/** Connection credit goes back on receipt, in smaller steps: a sender keeps little in flight (writer.ts IN_FLIGHT_MAX). */
const CONNECTION_RETURN_STEP = 256 * 1024;
/** How long streams may drain what they received after the peer ended the connection. */
const PEER_END_GRACE_MS = 30_000;
/**
 * A peer that does not read must not make us hold its answers (without this, a PONG per PING grew the
 * daemon by 70 MB/s). Past this control-frame backlog the peer is not read until the socket drains;
 * past OUTPUT_HARD_CAP unsent bytes of any kind (DATA is bounded by the windows: 32 MiB) it is dropped.
 */
export const CONTROL_SOFT_CAP = 256 * 1024;
export const OUTPUT_HARD_CAP = 64 * 1024 * 1024;
/** PINGs a peer may send: a burst, then this many per second (both sides ping every 3 s). */
export const PING_BURST = 20;
export const PING_RATE = 5;

export interface MuxOptions {
  /** The side that opens streams (the daemon) uses odd ids; the accepting side (the agent) takes them. */
  opener: boolean;
  /** Most concurrent streams the accepting side takes; more are refused with RST. */
  maxStreams?: number;
  /** Our receive window per stream (default: a fixed STREAM_WINDOW). */
  receiveWindow?: StreamWindows;
  /** The peer's receive window per stream, which we send into (default: a fixed STREAM_WINDOW). */
  sendWindow?: StreamWindows;
}

/**
 * A multiplexed tunnel over one socket: streams with per-stream and
 * per-connection flow control (credit-based, as in HTTP/2), half-close,
 * resets with reasons, pings and GOAWAY. Frames leave through a FrameWriter
 * (writer.ts), batched per event-loop turn.
 *
 * Events: 'stream' (stream, target) on the accepting side, 'goaway' (reason),
 * 'close' (error or undefined).
 */
export class MuxSession extends EventEmitter implements StreamHost {
  readonly #socket: Socket;
  readonly #opener: boolean;
  readonly #maxStreams: number;
  readonly #streams = new Map<number, MuxStream>();
  readonly #reader: FrameReader;
  readonly #writer: FrameWriter;
  readonly #recvWindow: StreamWindows;
  readonly #sendWindow: StreamWindows;
  /** Smoothed ping round trip in ms (0 until the first PONG): how fast "quickly" is for window growth. */
  #srttMs = 0;
  #nextId: number;
  /** Received bytes not yet returned as connection credit, and credit waiting to be returned. */
  #recvOutstanding = 0;
  #returnPending = 0;
  /** Pings in flight; `at` from process.hrtime (the global `performance` would load perf_hooks into the agent for this alone). */
  readonly #pings = new Map<number, { at: bigint; done: (err: Error | null, ms?: number) => void }>();
  #pingSeq = 0;
  #goawaySent = false;
  #goawayReceived: string | undefined;
  #closing = false;
  /** Token bucket of the peer's PINGs. */
  #pingTokens = PING_BURST;
  #pingRefilled = Date.now();
  #closeReason: Error | undefined;
  /** The socket is gone: frames are dropped, streams that got their FIN may still be read out. */
  #socketClosed = false;
  destroyed = false;

  constructor(socket: Socket, opts: MuxOptions) {
    super();
    this.#socket = socket;
    this.#opener = opts.opener;
    this.#maxStreams = opts.maxStreams ?? 10_000;
    this.#recvWindow = opts.receiveWindow ?? FIXED_WINDOW;
    this.#sendWindow = opts.sendWindow ?? FIXED_WINDOW;
    this.#nextId = opts.opener ? 1 : 2;
    this.#reader = new FrameReader({
      data: (id, piece) => this.#onData(id, piece),
      control: (type, id, payload) => this.#onControl(type, id, payload),
      invalid: (message) => this.destroy(new StreamError('ERR_TUNNEL_PROTOCOL', `tunnel protocol error: ${message}`)),
    });
    this.#writer = new FrameWriter(socket, {
      connectionWindow: CONNECTION_WINDOW,
      controlSoftCap: CONTROL_SOFT_CAP,
      hardCap: OUTPUT_HARD_CAP,
      onBacklog: () => socket.pause(),
      onDrain: () => {
        if (!this.destroyed) socket.resume();
      },
      onOverflow: (bytes) => this.destroy(new StreamError('ERR_TUNNEL_OVERLOAD', `the peer does not read: ${bytes} bytes unsent`)),
    });
    socket.on('data', (chunk: Buffer) => this.#reader.push(chunk));
    socket.on('error', (err) => {
      this.#closeReason ??= err;
    });
    socket.on('end', () => this.#peerEnded('the peer closed the tunnel'));
    socket.on('close', () => {
      this.#socketClosed = true;
      this.#peerEnded(this.#closeReason?.message ?? 'the tunnel connection closed');
    });
  }

  get streamCount(): number {
    return this.#streams.size;
  }

  /** Bytes read from the peer so far: any of them shows it alive (keepalive.ts). */
  get bytesRead(): number {
    return this.#socket.bytesRead;
  }

  /** Whether we stopped reading the peer (our writes to it are backlogged): its silence then says nothing. */
  get readPaused(): boolean {
    return this.#socket.isPaused();
  }

  /** Opens a stream to `target`; throws when the session is closing or gone. */
  open(target: unknown, opts: { allowHalfOpen?: boolean } = {}): MuxStream {
    if (this.destroyed || this.#closing || this.#goawayReceived !== undefined) {
      throw new StreamError(
        'ERR_TUNNEL_CLOSED',
        this.#goawayReceived ? `the agent is going away: ${this.#goawayReceived}` : 'the tunnel is closed',
      );
    }
    const id = this.#nextId;
    this.#nextId += 2;
    const stream = new MuxStream(this, id, this.#sendWindow.initial, this.#recvWindow.initial, opts.allowHalfOpen ?? true);
    this.#streams.set(id, stream);
    this.#send(FRAME.OPEN, id, Buffer.from(JSON.stringify(target)));
    return stream;
  }

  /** Round-trip time to the peer; the callback gets an error if the session closes first. */
  ping(done: (err: Error | null, ms?: number) => void): void {
    if (this.destroyed) return done(new StreamError('ERR_TUNNEL_CLOSED', 'the tunnel is closed'));
    const seq = ++this.#pingSeq;
    const payload = Buffer.alloc(8);
    payload.writeUInt32BE(seq, 4);
    this.#pings.set(seq, { at: process.hrtime.bigint(), done });
    this.#send(FRAME.PING, 0, payload);
  }

  /** Tells the peer why no new streams will come (it sees the reason in its 'goaway' event). */
  goaway(reason: string): void {
    if (this.destroyed || this.#goawaySent) return;
    this.#goawaySent = true;
    this.#send(FRAME.GOAWAY, 0, Buffer.from(reason));
  }

  /** Graceful close: GOAWAY, then the connection ends once the streams in flight have finished. */
  close(reason = 'closing'): void {
    this.goaway(reason);
    this.#closing = true;
    if (this.#streams.size === 0) this.#endGracefully();
  }

  destroy(error?: Error): void {
    if (this.destroyed) return;
    this.destroyed = true;
    // Streams always get a tunnel code: a socket's ECONNRESET or a caller's plain Error (keepalive
    // timeout) must not pass for the target's own error, which the peer relays with the same codes.
    const reason = isTunnelError(error) ? error : new StreamError('ERR_TUNNEL_CLOSED', error?.message ?? 'the tunnel is closed');
    this.#writer.flush();
    this.#socket.destroy();
    for (const stream of this.#streams.values()) stream.destroy(reason);
    this.#streams.clear();
    for (const ping of this.#pings.values()) ping.done(reason);
    this.#pings.clear();
    this.#writer.release();
    this.emit('close', error);
  }

  // StreamHost: called by the streams.

  pump(stream: MuxStream): void {
    const pending = stream.pending;
    if (!pending) return;
    let chunk = pending.chunk;
    while (chunk.length > 0 && !this.destroyed) {
      // The connection window is the writer's: it sends what it holds as the peer returns credit.
      const n = Math.min(chunk.length, stream.sendCredit, MAX_DATA_FRAME);
      if (n <= 0) break;
      this.#send(FRAME.DATA, stream.id, n === chunk.length ? chunk : chunk.subarray(0, n));
      stream.sendCredit -= n;
      chunk = chunk.subarray(n);
    }
    if (chunk.length > 0 && !this.destroyed) {
      pending.chunk = chunk;
      return;
    }
    stream.pending = undefined;
    this.#writer.whenSent(stream.id, pending.done);
  }

  fin(stream: MuxStream): void {
    stream.finSent = true;
    if (this.#streams.has(stream.id)) this.#send(FRAME.FIN, stream.id);
  }

  consumed(stream: MuxStream): void {
    const consumed = stream.received - stream.readableLength;
    const back = consumed - stream.returned;
    if (back >= STREAM_RETURN_STEP && !stream.finReceived && this.#streams.has(stream.id)) {
      stream.returned = consumed;
      // A reader that keeps up gets a larger window: the credit returned grows it (windows.ts).
      const grown = grownWindow(stream, consumed, this.#recvWindow.max, this.#srttMs);
      this.#send(FRAME.WINDOW, stream.id, u32(back + grown - stream.recvWindow));
      stream.recvWindow = grown;
    }
  }

  closed(stream: MuxStream, error: Error | null): void {
    if (this.#streams.get(stream.id) !== stream) return;
    this.#streams.delete(stream.id);
    if (!(stream.finSent && stream.finReceived)) this.#writer.discard(stream.id); // never sent: no credit was taken
    if (!stream.resetByPeer && !(stream.finSent && stream.finReceived)) {
      const code = error && 'code' in error ? String((error as { code: unknown }).code) : 'CANCEL';
      this.#send(FRAME.RST, stream.id, Buffer.from(JSON.stringify({ code, message: error?.message ?? 'stream cancelled' })));
    }
    if (this.#closing && this.#streams.size === 0) this.#endGracefully();
  }

  // Receiving.

  #onData(id: number, piece: Buffer): void {
    this.#recvOutstanding += piece.length;
    if (this.#recvOutstanding > CONNECTION_WINDOW) return this.#protocolError('the peer overran the connection window');
    const stream = this.#streams.get(id);
    if (!stream || stream.finReceived || stream.destroyed) {
      this.#returnCredit(piece.length); // a stream that just closed: drop the bytes, keep the window
      return;
    }
    if (stream.received + piece.length - stream.returned > stream.recvWindow)
      return this.#protocolError(`the peer overran the window of stream ${id}`);
    // Connection credit goes back on receipt: bytes a slow reader leaves in its stream are bounded by
    // the stream's window, and must not take the window every other stream shares.
    this.#returnCredit(piece.length);
    stream.deliver(piece);
  }

  #onControl(type: number, id: number, payload: Buffer): void {
    if (this.destroyed) return;
    if (type === FRAME.OPEN) return this.#onOpen(id, payload);
    if (id === 0) {
      if (type === FRAME.WINDOW) return this.#onConnectionWindow(payload);
      if (type === FRAME.PING) return this.#onPing(payload);
      if (type === FRAME.PONG) return this.#onPong(payload);
      if (type === FRAME.GOAWAY) {
        if (this.#goawayReceived !== undefined) return; // said once is enough
        this.#goawayReceived = payload.toString('utf8').slice(0, 1024);
        this.emit('goaway', this.#goawayReceived);
        return;
      }
      return this.#protocolError(`frame type ${type} on stream 0`);
    }
    const stream = this.#streams.get(id);
    if (!stream) return; // frames racing a reset or close: nothing to do
    if (type === FRAME.FIN) {
      stream.finReceived = true;
      stream.push(null);
    } else if (type === FRAME.RST) {
      stream.resetByPeer = true;
      const { code, message } = parseReset(payload);
      stream.destroy(new StreamError(code, message));
    } else if (type === FRAME.WINDOW) {
      const increment = payload.length === 4 ? payload.readUInt32BE(0) : 0;
      // Credit only comes back for bytes sent, plus growth of the window up to the negotiated most.
      if (increment === 0 || stream.sendCredit + increment > this.#sendWindow.max) return this.#protocolError('bad stream WINDOW');
      stream.sendCredit += increment;
      this.pump(stream);
    } else {
      this.#protocolError(`frame type ${type} on a stream`);
    }
  }

  #onOpen(id: number, payload: Buffer): void {
    const refuse = (code: string, message: string) => this.#send(FRAME.RST, id, Buffer.from(JSON.stringify({ code, message })));
    if (this.#opener || id === 0 || id % 2 === 0) return this.#protocolError(`unexpected OPEN of stream ${id}`);
    if (this.#streams.has(id)) return this.#protocolError(`stream ${id} opened twice`);
    if (this.#goawaySent || this.#closing) return refuse('REFUSED', 'the agent is going away');
    if (this.#streams.size >= this.#maxStreams) return refuse('REFUSED', `more than ${this.#maxStreams} streams`);
    let target: unknown;
    try {
      target = JSON.parse(payload.toString('utf8'));
    } catch {
      return refuse('BAD_TARGET', 'the stream target is not JSON');
    }
    const stream = new MuxStream(this, id, this.#sendWindow.initial, this.#recvWindow.initial, true);
    this.#streams.set(id, stream);
    this.emit('stream', stream, target);
  }

  #onConnectionWindow(payload: Buffer): void {
    const increment = payload.length === 4 ? payload.readUInt32BE(0) : 0;
    // Credit only comes back for bytes sent.
    if (increment === 0 || increment > this.#writer.inFlight) return this.#protocolError('bad connection WINDOW');
    this.#writer.credited(increment);
  }

  /** Answers a PING, within the rate a live peer needs (HTTP/2 servers do the same: CVE-2019-9512). */
  #onPing(payload: Buffer): void {
    const now = Date.now();
    this.#pingTokens = Math.min(PING_BURST, this.#pingTokens + ((now - this.#pingRefilled) / 1000) * PING_RATE);
    this.#pingRefilled = now;
    if (this.#pingTokens < 1) return this.#protocolError(`ping flood (more than ${PING_RATE} a second)`);
    this.#pingTokens -= 1;
    // A copy: the payload is a view of the socket's chunk, which a queued PONG would keep alive.
    this.#send(FRAME.PONG, 0, Buffer.from(payload));
  }

  #onPong(payload: Buffer): void {
    const seq = payload.length === 8 ? payload.readUInt32BE(4) : -1;
    const ping = this.#pings.get(seq);
    if (!ping) return;
    this.#pings.delete(seq);
    const ms = Number(process.hrtime.bigint() - ping.at) / 1e6;
    this.#srttMs = this.#srttMs === 0 ? ms : 0.875 * this.#srttMs + 0.125 * ms; // as TCP's SRTT (RFC 6298)
    ping.done(null, ms);
  }

  #returnCredit(n: number): void {
    if (n <= 0) return;
    this.#returnPending += n;
    if (this.#returnPending < CONNECTION_RETURN_STEP) return;
    this.#recvOutstanding -= this.#returnPending;
    this.#send(FRAME.WINDOW, 0, u32(this.#returnPending));
    this.#returnPending = 0;
    // At once, not at the end of the turn: the sender keeps little in flight, and a turn that
    // relays megabytes to clients would hold its credit back meanwhile.
    this.#writer.flush();
  }

  /**
   * The peer ended the connection (a graceful close once its streams were done), or the socket
   * closed. Streams that got their FIN hold complete data a slow reader may not have taken yet:
   * they are read out first (within PEER_END_GRACE_MS). Streams still waiting for bytes will never
   * get them and fail now.
   */
  #peerEnded(why: string): void {
    if (this.destroyed) return;
    const gone = new StreamError('ERR_TUNNEL_CLOSED', why);
    this.#goawayReceived ??= why;
    for (const stream of [...this.#streams.values()]) if (!stream.finReceived) stream.destroy(gone);
    if (this.#streams.size === 0) return this.destroy(gone);
    if (this.#closing) return;
    this.#closing = true;
    setTimeout(() => this.destroy(gone), PEER_END_GRACE_MS).unref();
  }

  #protocolError(message: string): void {
    this.destroy(new StreamError('ERR_TUNNEL_PROTOCOL', `tunnel protocol error: ${message}`));
  }

  #endGracefully(): void {
    this.#writer.flush();
    this.#socket.end();
    // The peer answers with its own end; a peer that does not is cut after a moment.
    setTimeout(() => this.destroy(), 2_000).unref();
  }

  #send(type: number, id: number, payload?: Buffer): void {
    if (this.destroyed || this.#socketClosed) return;
    this.#writer.send(type, id, payload);
  }
}

function isTunnelError(error: Error | undefined): error is StreamError {
  return error instanceof StreamError && error.code.startsWith('ERR_TUNNEL_');
}

function u32(n: number): Buffer {
  const b = Buffer.allocUnsafe(4);
  b.writeUInt32BE(n, 0);
  return b;
}

function parseReset(payload: Buffer): { code: string; message: string } {
  try {
    const parsed = JSON.parse(payload.toString('utf8')) as { code?: unknown; message?: unknown };
    return {
      code: String(parsed.code ?? 'RESET').slice(0, 64),
      message: String(parsed.message ?? 'stream reset by the peer').slice(0, 1024),
    };
  } catch {
    return { code: 'RESET', message: 'stream reset by the peer' };
  }
}
