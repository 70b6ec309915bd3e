import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';

const brotli = promisify(brotliCompress);
const gz = promisify(gzip);

export type Encoding = 'br' | 'gzip' | 'identity';

/** One representation (the page's HTML, or the summary's JSON), with its compressed forms made on first use. */
export class Representation {
  readonly body: Buffer;
  readonly etag: string;
  readonly #encoded = new Map<Encoding, Promise<Buffer>>();

  constructor(text: string) {
    this.body = Buffer.from(text);
    this.etag = `W/"${createHash('sha1').update(this.body).digest('base64url').slice(0, 22)}"`;
  }

  /** The body in `encoding`, compressed once off the main thread and kept. */
  encoded(encoding: Encoding): Promise<Buffer> {
    if (encoding === 'identity') return Promise.resolve(this.body);
    let found = this.#encoded.get(encoding);
    if (!found) {
      found =
        encoding === 'br'
          ? brotli(this.body, { params: { [constants.BROTLI_PARAM_QUALITY]: 6, [constants.BROTLI_PARAM_SIZE_HINT]: this.body.length } })
          : gz(this.body, { level: 6 });
      this.#encoded.set(encoding, found);
    }
    return found;
  }
}

/** br, else gzip, else identity, by the client's `Accept-Encoding` (a `q=0` refuses). */
export function pickEncoding(header: string | string[] | undefined): Encoding {
  const text = Array.isArray(header) ? header.join(',') : (header ?? '');
  const accepted = new Set<string>();
  for (const part of text.split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => /^\s*q=([\d.]+)/.exec(p)).find(Boolean);
    if (name && !(q && Number(q[1]) === 0)) accepted.add(name.trim());
  }
  if (accepted.has('br')) return 'br';
  if (accepted.has('gzip') || accepted.has('*')) return 'gzip';
  return 'identity';
}

interface Entry<T> {
  value: T;
  at: number;
}

/**
 * Values kept per key (a page and an audience) for `maxAgeMs`. Past that age
 * an entry is still served while one refresh runs (the page stays fast while
 * uptime figures refresh); `invalidateAll()` (a status changed) drops every
 * entry, so the next read waits for fresh data. Concurrent misses share one
 * build, and a build that raced an invalidation is not kept.
 */
export class TimedCache<T> {
  readonly #maxAgeMs: number;
  /** Entries kept at most (the oldest go first): keys are pages × audiences, plus versions of pages just edited. */
  readonly #capacity: number;
  readonly #entries = new Map<string, Entry<T>>();
  readonly #building = new Map<string, Promise<T>>();
  #generation = 0;

  constructor(maxAgeMs: number, capacity = 256) {
    this.#maxAgeMs = maxAgeMs;
    this.#capacity = capacity;
  }

  async get(key: string, build: () => Promise<T>): Promise<T> {
    const hit = this.#entries.get(key);
    if (hit && Date.now() - hit.at < this.#maxAgeMs) return hit.value;
    const running = this.#building.get(key) ?? this.#build(key, build);
    return hit ? hit.value : running;
  }

  #build(key: string, build: () => Promise<T>): Promise<T> {
    const generation = this.#generation;
    const at = Date.now();
    const running = build()
      .then((value) => {
        if (generation === this.#generation) {
          this.#entries.delete(key);
          if (this.#entries.size >= this.#capacity) this.#entries.delete(this.#entries.keys().next().value!);
          this.#entries.set(key, { value, at });
        }
        return value;
      })
      .finally(() => {
        if (this.#building.get(key) === running) this.#building.delete(key);
      });
    running.catch(() => {}); // a stale read that started it does not await it
    this.#building.set(key, running);
    return running;
  }

  invalidateAll(): void {
    this.#generation++;
    this.#entries.clear();
    this.#building.clear();
  }
}
