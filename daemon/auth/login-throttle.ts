/**
 * Throttles failed logins per username: after `maxFailures` failures within
 * `windowMs`, further attempts get 429 until the oldest failure leaves the
 * window. In memory: an attacker cannot grow it past `maxTracked` names.
 * Pods sharing a database tell each other of failures and successes, so the
 * count is the cluster's.
 */
export class LoginThrottle {
  readonly #failures = new Map<string, number[]>();
  readonly #maxFailures: number;
  readonly #windowMs: number;
  readonly #maxTracked: number;
  /** Pods: told of this pod's failures and successes, which it passes on to the others (cluster/login-sharing.ts). */
  share: { failed(username: string, at: number): void; succeeded(username: string): void } | undefined;

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

  /** `fromPeer`: another pod's failure, not passed on again. */
  fail(username: string, now = Date.now(), fromPeer = false): void {
    const key = username.toLowerCase();
    if (!fromPeer) this.share?.failed(key, now);
    const recent = this.#recent(key, now);
    recent.push(now);
    this.#failures.delete(key); // re-insert: Map order is least recently failed first
    this.#failures.set(key, recent);
    if (this.#failures.size > this.#maxTracked) this.#failures.delete(this.#failures.keys().next().value!);
  }

  succeed(username: string, fromPeer = false): void {
    this.#failures.delete(username.toLowerCase());
    if (!fromPeer) this.share?.succeeded(username.toLowerCase());
  }

  #recent(key: string, now: number): number[] {
    const list = (this.#failures.get(key) ?? []).filter((t) => now - t < this.#windowMs);
    return list;
  }
}
