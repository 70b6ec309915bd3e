import ipaddr from 'ipaddr.js';

/**
 * The source a dial is counted against: the IPv4 address (IPv4-mapped IPv6
 * included), or the /64 of an IPv6 address, since one host commonly holds a
 * whole /64 and could otherwise pick a fresh address per try. The edge's
 * rate limits count clients the same way.
 */
export function dialSource(address: string | undefined): string {
  if (!address) return 'unknown';
  try {
    const ip = ipaddr.process(address);
    if (ip.kind() === 'ipv4') return ip.toString();
    return `${(ip as ipaddr.IPv6).parts
      .slice(0, 4)
      .map((p) => p.toString(16))
      .join(':')}::/64`;
  } catch {
    return address;
  }
}

/** Dials refused since the last summary, by reason. */
export interface Unreported {
  badToken: number;
  limited: number;
}

interface Entry {
  /** Times of bad-token refusals still in the window, oldest first. */
  refusals: number[];
  /** Token lookups under way: counted against the limit, so concurrent tries cannot overshoot it. */
  pending: number;
  unreported: Unreported;
  /** The first refusal of this summary interval was logged on its own. */
  announced: boolean;
}

/**
 * Refused agent dials per source: after `maxRefusals` bad tokens within
 * `windowMs`, every dial from that source (a valid token too, or the limit
 * would be an oracle) is refused until the oldest refusal leaves the window.
 * At most `maxTracked` sources are kept, least recently seen evicted first.
 */
export class DialLimiter {
  readonly #entries = new Map<string, Entry>();
  readonly #maxRefusals: number;
  readonly #windowMs: number;
  readonly #maxTracked: number;
  /** Unreported counts of evicted sources, so the summary still adds up. */
  #evicted: Unreported = { badToken: 0, limited: 0 };

  constructor(maxRefusals: number, windowMs: number, maxTracked = 10_000) {
    this.#maxRefusals = maxRefusals;
    this.#windowMs = windowMs;
    this.#maxTracked = maxTracked;
  }

  get size(): number {
    return this.#entries.size;
  }

  /**
   * Called before a token is looked up: seconds to wait (the dial is refused,
   * and counted as limited), or 0 and the lookup is pending until `settle`.
   */
  begin(source: string, now = Date.now()): number {
    const entry = this.#touch(source, now);
    if (entry.refusals.length + entry.pending >= this.#maxRefusals) {
      entry.unreported.limited++;
      const oldest = entry.refusals[0];
      return oldest === undefined ? 1 : Math.max(1, Math.ceil((oldest + this.#windowMs - now) / 1000));
    }
    entry.pending++;
    return 0;
  }

  /** The lookup begun for this source ended; `refused`: the token was bad. Returns true for the interval's first refusal. */
  settle(source: string, refused: boolean, now = Date.now()): boolean {
    const entry = this.#touch(source, now);
    entry.pending = Math.max(0, entry.pending - 1);
    if (!refused) return false;
    entry.refusals.push(now);
    entry.unreported.badToken++;
    const first = !entry.announced;
    entry.announced = true;
    return first;
  }

  /**
   * The counts since the last call, per source, and drops sources with
   * nothing left to remember. `others` holds the counts of evicted sources.
   */
  drain(now = Date.now()): { sources: Array<{ source: string } & Unreported>; others: Unreported } {
    const sources: Array<{ source: string } & Unreported> = [];
    for (const [source, entry] of this.#entries) {
      const { badToken, limited } = entry.unreported;
      if (badToken + limited > 0) sources.push({ source, badToken, limited });
      entry.unreported = { badToken: 0, limited: 0 };
      entry.announced = false;
      this.#expire(entry, now);
      if (entry.refusals.length === 0 && entry.pending === 0) this.#entries.delete(source);
    }
    const others = this.#evicted;
    this.#evicted = { badToken: 0, limited: 0 };
    return { sources, others };
  }

  #expire(entry: Entry, now: number): void {
    while (entry.refusals.length > 0 && now - entry.refusals[0] >= this.#windowMs) entry.refusals.shift();
  }

  /** The source's entry, made the most recently used (Map order: least recently used first). */
  #touch(source: string, now: number): Entry {
    let entry = this.#entries.get(source);
    if (entry) this.#entries.delete(source);
    else entry = { refusals: [], pending: 0, unreported: { badToken: 0, limited: 0 }, announced: false };
    this.#expire(entry, now);
    this.#entries.set(source, entry);
    while (this.#entries.size > this.#maxTracked) {
      const [oldest, gone] = this.#entries.entries().next().value!;
      this.#entries.delete(oldest);
      this.#evicted.badToken += gone.unreported.badToken;
      this.#evicted.limited += gone.unreported.limited;
    }
    return entry;
  }
}
