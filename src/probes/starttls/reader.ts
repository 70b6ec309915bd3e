import type { Socket } from 'node:net';

/** Longest line of a STARTTLS dialogue (SMTP's limit is 512, IMAP greetings list capabilities). */
export const MAX_LINE_BYTES = 4096;
/** Most lines of one answer (an EHLO reply, an IMAP server's untagged lines before its tagged one). */
export const MAX_ANSWER_LINES = 64;
/** Most bytes of one binary answer (an LDAP extended response). */
export const MAX_MESSAGE_BYTES = 16 * 1024;

/** The server turned STARTTLS down, or broke the dialogue: a TLS_ERROR whose message is this one's. */
export class StartTlsRefused extends Error {}

/** A server's text in a message: control characters escaped, cut short, so a hostile banner cannot forge log lines. */
export function quote(text: string, max = 120): string {
  const cut = text.length > max ? `${text.slice(0, max)}…` : text;
  return JSON.stringify(cut);
}

/**
 * Reads a plain socket's bytes for a STARTTLS dialogue: lines (CRLF or LF) of at most
 * MAX_LINE_BYTES, or counted bytes. Every read fails when the socket closes or errs (the check's
 * timeout destroys it), so a dialogue never outlives its check. `detach()` hands the socket to TLS.
 */
export class DialogueReader {
  private buffer: Buffer = Buffer.alloc(0);
  private waiting: (() => void) | null = null;
  private ended: Error | null = null;
  private readonly onData = (chunk: Buffer) => {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    this.wake();
  };
  private readonly onEnd = () => {
    this.ended ??= new StartTlsRefused('the server closed the connection during STARTTLS');
    this.wake();
  };

  private readonly socket: Socket;

  constructor(socket: Socket) {
    this.socket = socket;
    socket.on('data', this.onData);
    socket.once('end', this.onEnd);
    socket.once('close', this.onEnd);
  }

  write(text: string | Buffer): void {
    this.socket.write(text);
  }

  /** One line without its line end. */
  async line(): Promise<string> {
    for (;;) {
      const end = this.buffer.indexOf(0x0a);
      if (end >= 0 && end <= MAX_LINE_BYTES) {
        const line = this.buffer.subarray(0, end).toString('latin1').replace(/\r$/, '');
        this.buffer = this.buffer.subarray(end + 1);
        return line;
      }
      if (end > MAX_LINE_BYTES || (end < 0 && this.buffer.length > MAX_LINE_BYTES))
        throw new StartTlsRefused(`the server sent a line longer than ${MAX_LINE_BYTES} bytes during STARTTLS`);
      await this.more();
    }
  }

  /** Exactly `n` bytes (n at most MAX_MESSAGE_BYTES). */
  async bytes(n: number): Promise<Buffer> {
    if (n > MAX_MESSAGE_BYTES) throw new StartTlsRefused(`the server's answer is longer than ${MAX_MESSAGE_BYTES} bytes`);
    while (this.buffer.length < n) await this.more();
    const out = this.buffer.subarray(0, n);
    this.buffer = this.buffer.subarray(n);
    return out;
  }

  /**
   * Stops reading so that TLS takes the socket over. Bytes already past the server's "go ahead"
   * would be read as if they came over TLS (the STARTTLS injection flaw): refused.
   */
  detach(): void {
    this.socket.off('data', this.onData);
    this.socket.off('end', this.onEnd);
    this.socket.off('close', this.onEnd);
    if (this.buffer.length > 0) throw new StartTlsRefused('the server sent data after accepting STARTTLS');
  }

  private more(): Promise<void> {
    if (this.ended) return Promise.reject(this.ended);
    return new Promise((resolve) => (this.waiting = resolve));
  }

  private wake(): void {
    const waiting = this.waiting;
    this.waiting = null;
    waiting?.();
  }
}

/**
 * One SMTP or FTP reply: `ddd-text` lines continue it, `ddd text` ends it (RFC 5321 4.2.1,
 * RFC 959 4.2). Returns the code and the last line.
 */
export async function codedReply(reader: DialogueReader): Promise<{ code: number; line: string }> {
  for (let n = 0; n < MAX_ANSWER_LINES; n++) {
    const line = await reader.line();
    const m = /^(\d{3})([ -]|$)/.exec(line);
    // FTP lets a multi-line reply carry lines without the code; SMTP does not, but skipping them is harmless.
    if (m && m[2] !== '-') return { code: Number(m[1]), line };
  }
  throw new StartTlsRefused(`the server's reply went past ${MAX_ANSWER_LINES} lines`);
}

/** Fails unless the reply's code is `want`: `what` names the step, the server's line is quoted. */
export function expectCode(reply: { code: number; line: string }, want: number, what: string): void {
  if (reply.code !== want) throw new StartTlsRefused(`${what}: ${quote(reply.line)}`);
}
