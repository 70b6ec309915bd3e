/**
 * The last `limit` bytes of a stream, in bounded memory: what `monctl run` sends as the body of
 * its finish ping (a job's output can be gigabytes; its end is where the error usually is).
 * Holds at most `limit` bytes plus one chunk, whatever the chunks' sizes.
 */
export class TailBuffer {
  readonly #limit: number;
  #chunks: Buffer[] = [];
  #size = 0;
  /** Bytes seen in all, kept or not. */
  total = 0;

  constructor(limit: number) {
    this.#limit = limit;
  }

  push(chunk: Buffer): void {
    this.total += chunk.length;
    // A copy: a slice would keep the whole chunk (or a 64 KiB pool) alive.
    const kept = chunk.length > this.#limit ? Buffer.from(chunk.subarray(chunk.length - this.#limit)) : chunk;
    this.#chunks.push(kept);
    this.#size += kept.length;
    while (this.#chunks.length > 1 && this.#size - this.#chunks[0].length >= this.#limit) this.#size -= this.#chunks.shift()!.length;
  }

  /** The kept tail, at most `limit` bytes. */
  bytes(): Buffer {
    const all = Buffer.concat(this.#chunks, this.#size);
    return all.length > this.#limit ? all.subarray(all.length - this.#limit) : all;
  }
}
