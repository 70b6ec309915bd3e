/**
 * Throttles failed logins per username: after `maxFailures` failures within
 * `windowMs`, further attempts get 429 until the oldest failure leaves the
 * window. In memory: an attacker cannot grow it past `maxTracked` names.
 */
export class LoginThrottle {
  readonly #failures = new Map<string, number[]>();
  readonly #maxFailures: number;
  readonly #windowMs: number;
  readonly #maxTracked: number;

  constructor(maxFailures = 5, windowMs = 5 * 60_000, maxTracked = 10_000) {
    this.#maxFailures = maxFailures;
    this.#windowMs = windowMs;
    this.#maxTracked = maxTracked;
  }

  /** Seconds to wait, or 0 when the attempt may proceed. */
  retryAfter(username: string, now = Date.now()): number {
    const recent = this.#recent(username.toLowerCase(), now);
    if (recent.length < this.#maxFailures) return 0;
    return Math.max(1, Math.ceil((recent[0] + this.#windowMs - now) / 1000));
  }

  fail(username: string, now = Date.now()): void {
    const key = username.toLowerCase();
    const recent = this.#recent(key, now);
    recent.push(now);
    this.#failures.delete(key); // re-insert: Map order is least recently failed first
    this.#failures.set(key, recent);
    if (this.#failures.size > this.#maxTracked) this.#failures.delete(this.#failures.keys().next().value!);
  }

  succeed(username: string): void {
    this.#failures.delete(username.toLowerCase());
  }

  #recent(key: string, now: number): number[] {
    const list = (this.#failures.get(key) ?? []).filter((t) => now - t < this.#windowMs);
    return list;
  }
}
