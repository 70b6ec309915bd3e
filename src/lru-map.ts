/**
 * A map of bounded size that drops its least recently used entry when full, telling `onEvict`
 * (to close a pool, say). Map order is insertion order: a read moves the entry to the end, so
 * the first entry is always the least recently used. Every cache keyed by what a peer or a
 * resource chooses (client addresses, check timeouts, client certificates) goes through one.
 */
export class LruMap<K, V> {
  readonly #map = new Map<K, V>();
  readonly #max: number;
  readonly #onEvict: ((value: V, key: K) => void) | undefined;

  constructor(max: number, onEvict?: (value: V, key: K) => void) {
    this.#max = Math.max(1, max);
    this.#onEvict = onEvict;
  }

  get size(): number {
    return this.#map.size;
  }

  /** The value, now the most recently used. */
  get(key: K): V | undefined {
    const value = this.#map.get(key);
    if (value !== undefined) {
      this.#map.delete(key);
      this.#map.set(key, value);
    }
    return value;
  }

  set(key: K, value: V): this {
    if (!this.#map.delete(key) && this.#map.size >= this.#max) {
      const [oldest, evicted] = this.#map.entries().next().value as [K, V];
      this.#map.delete(oldest);
      this.#onEvict?.(evicted, oldest);
    }
    this.#map.set(key, value);
    return this;
  }

  /** The cached value, or a new one made, stored and returned. */
  getOrSet(key: K, make: () => V): V {
    const hit = this.get(key);
    if (hit !== undefined) return hit;
    const value = make();
    this.set(key, value);
    return value;
  }

  /** Removes an entry without telling `onEvict` (the caller closes what it removes). */
  delete(key: K): boolean {
    return this.#map.delete(key);
  }

  values(): IterableIterator<V> {
    return this.#map.values();
  }

  clear(): void {
    this.#map.clear();
  }
}
