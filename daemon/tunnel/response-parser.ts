/**
 * An incremental HTTP/1.1 response parser for the daemon's side of the
 * tunnel: the status line and headers of a target's answer, then its body as
 * framed by RFC 9112 section 6.3 (none, Content-Length, chunked, or to the end
 * of the connection). The body is passed on as views of the received chunks,
 * de-chunked: the edge re-frames it for the client, so a target's framing never
 * reaches the client as is. Strict where a lenient parser would let two
 * parties read one message differently: CRLF line ends, no folded headers,
 * token header names, one Content-Length value, Transfer-Encoding ending in
 * chunked or read to the close.
 */

/** Where the parser delivers a response. Calls stop once `error` or `end` ran. */
export interface ResponseSink {
  /** Status and headers as a flat list (name, value, name, value…), names as sent. */
  head(status: number, headers: string[], keepAlive: boolean): void;
  body(piece: Buffer): void;
  end(): void;
  error(message: string): void;
}

/** Parser states: what the next bytes are. */
const State = { Head: 0, Length: 1, ChunkSize: 2, ChunkData: 3, ChunkEnd: 4, Trailers: 5, ToClose: 6, Done: 7 } as const;

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const STATUS = /^HTTP\/1\.([01]) ([1-9]\d\d)(?: [^\r\n]*)?$/;
const CRLF2 = Buffer.from('\r\n\r\n');
/** A CR not followed by LF, an LF not preceded by CR, or a NUL. */
const BARE = /\r(?!\n)|(?<!\r)\n|\0/;
/** Chunk-size lines and trailer sections beyond this are refused (a peer feeding an endless line). */
const MAX_LINE = 8 * 1024;

export class ResponseParser {
  readonly #sink: ResponseSink;
  readonly #maxHead: number;
  #state: number = State.Done;
  #noBody = false;
  #left = 0;
  /** Bytes of an unfinished head, chunk-size line or trailer section, kept across chunks. */
  #pending: Buffer | undefined;

  constructor(sink: ResponseSink, maxHead: number) {
    this.#sink = sink;
    this.#maxHead = maxHead;
  }

  /** Expects the response to a new request; a HEAD request's response has no body. */
  expect(method: string): void {
    this.#state = State.Head;
    this.#noBody = method === 'HEAD';
    this.#pending = undefined;
  }

  get done(): boolean {
    return this.#state === State.Done;
  }

  /** True while the body runs to the close of the connection. */
  get toClose(): boolean {
    return this.#state === State.ToClose;
  }

  push(chunk: Buffer): void {
    let at = 0;
    if (this.#pending) {
      chunk = Buffer.concat([this.#pending, chunk]);
      this.#pending = undefined;
    }
    while (at < chunk.length) {
      switch (this.#state) {
        case State.Head: {
          const end = chunk.indexOf(CRLF2, at);
          if (end < 0) return this.#keep(chunk, at, this.#maxHead, 'response head too large');
          if (end - at > this.#maxHead) return void this.#fail('response head too large');
          if (!this.#head(chunk.toString('latin1', at, end))) return;
          at = end + 4;
          break;
        }
        case State.Length: {
          const n = Math.min(this.#left, chunk.length - at);
          this.#left -= n;
          const piece = chunk.subarray(at, at + n);
          at += n;
          if (this.#left === 0) this.#state = State.Done;
          this.#sink.body(piece);
          if (this.#state === State.Done && this.#left === 0) this.#sink.end();
          break;
        }
        case State.ChunkSize: {
          const end = chunk.indexOf('\r\n', at, 'latin1');
          if (end < 0) return this.#keep(chunk, at, MAX_LINE, 'chunk-size line too long');
          const m = /^([0-9A-Fa-f]{1,12})[ \t]*(?:;[^\r\n]*)?$/.exec(chunk.toString('latin1', at, end));
          if (!m) return void this.#fail('invalid chunk size');
          at = end + 2;
          this.#left = parseInt(m[1], 16);
          this.#state = this.#left === 0 ? State.Trailers : State.ChunkData;
          break;
        }
        case State.ChunkData: {
          const n = Math.min(this.#left, chunk.length - at);
          this.#left -= n;
          const piece = chunk.subarray(at, at + n);
          at += n;
          if (this.#left === 0) this.#state = State.ChunkEnd;
          this.#sink.body(piece);
          break;
        }
        case State.ChunkEnd: {
          if (chunk.length - at < 2) return this.#keep(chunk, at, 2, '');
          if (chunk[at] !== 13 || chunk[at + 1] !== 10) return void this.#fail('chunk data not followed by CRLF');
          at += 2;
          this.#state = State.ChunkSize;
          break;
        }
        case State.Trailers: {
          // Trailers are read past, not relayed (the edge never relayed them).
          const empty = chunk.length - at >= 2 && chunk[at] === 13 && chunk[at + 1] === 10;
          const end = empty ? at - 2 : chunk.indexOf(CRLF2, at);
          if (end < 0) return this.#keep(chunk, at, MAX_LINE, 'trailer section too large');
          at = end + 4;
          this.#state = State.Done;
          this.#sink.end();
          break;
        }
        case State.ToClose: {
          const piece = at === 0 ? chunk : chunk.subarray(at);
          at = chunk.length;
          this.#sink.body(piece);
          break;
        }
        case State.Done:
          // Bytes beyond the response (or while none was asked for): the connection is not reused.
          return void this.#fail('data after the end of the response');
      }
    }
  }

  /** The connection ended: the end of a body read to the close, an error anywhere else. */
  eof(): void {
    if (this.#state === State.ToClose) {
      this.#state = State.Done;
      return this.#sink.end();
    }
    if (this.#state !== State.Done) this.#fail('the connection closed before the response was complete');
  }

  /** Parses a complete head; false when it was refused. */
  #head(text: string): boolean {
    // Lines end in CRLF only: a CR or LF alone, or a NUL, anywhere is refused (scanned once, not per line).
    if (BARE.test(text)) return this.#fail('invalid character in the response head');
    let eol = text.indexOf('\r\n');
    if (eol < 0) eol = text.length;
    const status = STATUS.exec(eol === text.length ? text : text.slice(0, eol));
    if (!status) return this.#fail('invalid status line');
    const code = Number(status[2]);
    const headers: string[] = [];
    let length = -1;
    let chunked = false;
    let te = false;
    let connection = '';
    for (let at = eol + 2; at < text.length; at = eol + 2) {
      eol = text.indexOf('\r\n', at);
      if (eol < 0) eol = text.length;
      const colon = text.indexOf(':', at);
      if (colon <= at || colon > eol) return this.#fail('invalid header line');
      const name = text.slice(at, colon);
      if (!TOKEN.test(name)) return this.#fail('invalid header line');
      // The value without optional whitespace (SP, HTAB) around it, sliced once.
      let from = colon + 1;
      let to = eol;
      while (from < to && (text.charCodeAt(from) === 32 || text.charCodeAt(from) === 9)) from++;
      while (to > from && (text.charCodeAt(to - 1) === 32 || text.charCodeAt(to - 1) === 9)) to--;
      const value = text.slice(from, to);
      headers.push(name, value);
      const size = name.length;
      if (size !== 10 && size !== 14 && size !== 17) continue;
      const lower = name.toLowerCase();
      if (lower === 'content-length') {
        for (const part of value.split(',')) {
          if (!/^\s*\d{1,15}\s*$/.test(part)) return this.#fail('invalid content-length');
          const n = Number(part);
          if (length >= 0 && n !== length) return this.#fail('conflicting content-length values');
          length = n;
        }
      } else if (lower === 'transfer-encoding') {
        te = true;
        chunked = /(?:^|,)\s*chunked\s*$/i.test(value);
      } else if (lower === 'connection') {
        connection += `${value.toLowerCase()},`;
      }
    }
    if (code < 200) {
      if (code === 101) return this.#fail('101 Switching Protocols to a request without Upgrade');
      return true; // informational (100 Continue, 103 Early Hints): the final answer follows
    }
    const closes = /(?:^|,)\s*close\s*,/.test(connection) || (status[1] === '0' && !/(?:^|,)\s*keep-alive\s*,/.test(connection));
    if (this.#noBody || code === 204 || code === 304) this.#state = State.Done;
    else if (te) this.#state = chunked ? State.ChunkSize : State.ToClose;
    else if (length >= 0) this.#state = length === 0 ? State.Done : State.Length;
    else this.#state = State.ToClose;
    this.#left = length;
    // A response framed by both headers may be read differently by another party: its connection is not reused.
    this.#sink.head(code, headers, !closes && this.#state !== State.ToClose && !(te && length >= 0));
    if (this.#state === State.Done) this.#sink.end();
    return true;
  }

  /** Keeps the unparsed rest for the next chunk, up to `max` bytes. */
  #keep(chunk: Buffer, at: number, max: number, tooLarge: string): void {
    if (chunk.length - at > max) return void this.#fail(tooLarge);
    this.#pending = Buffer.from(chunk.subarray(at)); // a copy: the socket chunk is not kept alive for a few bytes
  }

  #fail(message: string): false {
    this.#state = State.Done;
    this.#sink.error(message);
    return false;
  }
}
