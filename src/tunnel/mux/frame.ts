/**
 * Frames of the tunnel multiplexer. Every frame is a 9-byte header
 * (payload length u32, type u8, stream id u32, big-endian) and its payload.
 * Stream 0 is the connection itself (WINDOW, PING, PONG, GOAWAY).
 */
export const FRAME = {
  /** Stream bytes; counted against both flow-control windows. */
  DATA: 0,
  /** Opens a stream; the payload is the JSON target of the stream. */
  OPEN: 1,
  /** The sender will write no more on this stream (half-close). */
  FIN: 2,
  /** The stream is aborted both ways; payload JSON `{ code, message }`. */
  RST: 3,
  /** Returns receive credit: u32 increment, for a stream or (id 0) the connection. */
  WINDOW: 4,
  PING: 5,
  PONG: 6,
  /** No new streams; payload: the reason (UTF-8). */
  GOAWAY: 7,
} as const;

export const HEADER_SIZE = 9;
/** Largest DATA payload either side sends or accepts: big frames keep bulk transfers cheap. */
export const MAX_DATA_FRAME = 256 * 1024;
/** Largest payload of any other frame: control frames are small and buffered whole. */
export const MAX_CONTROL_FRAME = 16 * 1024;

export function frameHeader(type: number, id: number, length: number): Buffer {
  const header = Buffer.allocUnsafe(HEADER_SIZE);
  header.writeUInt32BE(length, 0);
  header[4] = type;
  header.writeUInt32BE(id, 5);
  return header;
}

/** Where a FrameReader delivers what it parsed. */
export interface FrameSink {
  /** A piece of a DATA payload, passed on as it arrives (a view of the socket chunk, not a copy). */
  data(id: number, piece: Buffer): void;
  /** A whole frame of any other type. */
  control(type: number, id: number, payload: Buffer): void;
  /** The byte stream is not valid mux framing: the connection must go. */
  invalid(message: string): void;
}

const EMPTY = Buffer.alloc(0);

/** Incremental parser: socket chunks in, frames out, whatever the chunk boundaries. */
export class FrameReader {
  readonly #sink: FrameSink;
  readonly #header = Buffer.allocUnsafe(HEADER_SIZE);
  #headerFill = 0;
  /** The frame being read, once its header is complete (-1: reading a header). */
  #type = -1;
  #id = 0;
  #left = 0;
  #control: Buffer[] = [];
  #dead = false;

  constructor(sink: FrameSink) {
    this.#sink = sink;
  }

  push(chunk: Buffer): void {
    let off = 0;
    while (off < chunk.length && !this.#dead) {
      if (this.#type < 0) {
        const n = Math.min(HEADER_SIZE - this.#headerFill, chunk.length - off);
        chunk.copy(this.#header, this.#headerFill, off, off + n);
        this.#headerFill += n;
        off += n;
        if (this.#headerFill < HEADER_SIZE) return;
        this.#headerFill = 0;
        if (!this.#begin()) return;
        continue;
      }
      const n = Math.min(this.#left, chunk.length - off);
      const piece = chunk.subarray(off, off + n);
      off += n;
      this.#left -= n;
      if (this.#type === FRAME.DATA) this.#sink.data(this.#id, piece);
      else this.#control.push(piece);
      if (this.#left === 0) this.#end();
    }
  }

  /** Validates a complete header; false when the connection is dead. */
  #begin(): boolean {
    const length = this.#header.readUInt32BE(0);
    const type = this.#header[4];
    const id = this.#header.readUInt32BE(5);
    if (type > FRAME.GOAWAY) return this.#fail(`unknown frame type ${type}`);
    const limit = type === FRAME.DATA ? MAX_DATA_FRAME : MAX_CONTROL_FRAME;
    if (length > limit) return this.#fail(`frame of ${length} bytes (type ${type}) exceeds ${limit}`);
    this.#type = type;
    this.#id = id;
    this.#left = length;
    if (length === 0) this.#end();
    return true;
  }

  #end(): void {
    const type = this.#type;
    this.#type = -1;
    if (type === FRAME.DATA) return;
    const parts = this.#control;
    this.#control = [];
    this.#sink.control(type, this.#id, parts.length === 0 ? EMPTY : parts.length === 1 ? parts[0] : Buffer.concat(parts));
  }

  #fail(message: string): false {
    this.#dead = true;
    this.#sink.invalid(message);
    return false;
  }
}
