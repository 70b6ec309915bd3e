import { Counter } from 'prom-client';
import type { HttpError } from '../../src/errors.ts';
import type { DaemonContext } from '../context.ts';
import { DialLimiter, dialSource } from './dial-limiter.ts';
import { problem } from './raw-response.ts';

export type RefusalReason = 'bad_token' | 'rate_limited' | 'bad_upgrade' | 'draining';
const REASONS: readonly RefusalReason[] = ['bad_token', 'rate_limited', 'bad_upgrade', 'draining'];

/** Log lines per summary interval at most: the first refusal of a source, then one summary line per source. */
const MAX_LINES = 20;

/**
 * Guards the agent dial (`GET /admin/tunnel`) against token guessing: the
 * per-source limit of DialLimiter, a counter of refusals by reason, and logs
 * in summary. A source's first bad token is logged at once (a misconfigured
 * agent shows up right away); the rest are counted and summed up once per
 * window, so 2,900 tries make a few lines, not 2,900.
 */
export class DialGuard {
  readonly #ctx: DaemonContext;
  readonly #limiter: DialLimiter;
  readonly #windowMs: number;
  readonly #refused: Counter<'reason'>;
  readonly #timer: NodeJS.Timeout;
  /** Sources whose first refusal this interval was logged on its own line. */
  readonly #announced = new Set<string>();

  constructor(ctx: DaemonContext) {
    this.#ctx = ctx;
    const { maxRefusals, windowMs } = ctx.config.tunnelDials;
    this.#limiter = new DialLimiter(maxRefusals, windowMs);
    this.#windowMs = windowMs;
    const registry = ctx.metrics.registry;
    this.#refused =
      (registry.getSingleMetric('monctl_tunnel_dials_refused_total') as Counter<'reason'> | undefined) ??
      new Counter({
        name: 'monctl_tunnel_dials_refused_total',
        labelNames: ['reason'] as const,
        registers: [registry],
        help: 'Agent dials (GET /admin/tunnel) refused, by reason: bad_token, rate_limited, bad_upgrade, draining',
      });
    for (const reason of REASONS) this.#refused.inc({ reason }, 0);
    this.#timer = setInterval(() => this.#summarise(), windowMs);
    this.#timer.unref();
  }

  /** Counts a refusal that the limiter does not track (draining, a wrong Upgrade header). */
  refused(reason: RefusalReason): void {
    this.#refused.inc({ reason });
  }

  /** Before the token lookup: the 429 to send, or undefined and `settle` must follow. */
  admit(remoteAddress: string | undefined): HttpError | undefined {
    const wait = this.#limiter.begin(dialSource(remoteAddress));
    if (wait === 0) return undefined;
    this.#refused.inc({ reason: 'rate_limited' });
    return problem(429, 'rate-limited', `Too many refused dials from this address: retry in ${wait} s`, { 'Retry-After': String(wait) });
  }

  /** The token lookup admitted by `admit` ended: `ok` false for a bad token. */
  settle(remoteAddress: string | undefined, ok: boolean): void {
    const source = dialSource(remoteAddress);
    const first = this.#limiter.settle(source, !ok);
    if (ok) return;
    this.#refused.inc({ reason: 'bad_token' });
    if (first && this.#announced.size < MAX_LINES) {
      this.#announced.add(source);
      this.#ctx.log.warn(
        { remoteAddress, source },
        `tunnel: agent refused (bad registration token); more refusals from ${source} are summed up every ${this.#seconds()} s`,
      );
    }
  }

  /** One line per source that was refused more than the line already logged, the busiest first; the rest in one line. */
  #summarise(): void {
    const { sources, others } = this.#limiter.drain();
    const s = this.#seconds();
    const lines = sources
      .filter((e) => !(e.badToken + e.limited === 1 && this.#announced.has(e.source)))
      .sort((a, b) => b.badToken + b.limited - (a.badToken + a.limited));
    this.#announced.clear();
    for (const e of lines.slice(0, MAX_LINES)) {
      this.#ctx.log.warn(
        { source: e.source, badToken: e.badToken, rateLimited: e.limited, seconds: s },
        `tunnel: refused ${e.badToken + e.limited} agent dials from ${e.source} in the last ${s} s (bad token: ${e.badToken}, rate limited: ${e.limited})`,
      );
    }
    for (const e of lines.slice(MAX_LINES)) {
      others.badToken += e.badToken;
      others.limited += e.limited;
    }
    const rest = lines.length - Math.min(lines.length, MAX_LINES);
    if (others.badToken + others.limited > 0) {
      this.#ctx.log.warn(
        { sources: rest, badToken: others.badToken, rateLimited: others.limited, seconds: s },
        `tunnel: refused ${others.badToken + others.limited} more agent dials from other sources in the last ${s} s (bad token: ${others.badToken}, rate limited: ${others.limited})`,
      );
    }
  }

  #seconds(): number {
    return Math.max(1, Math.round(this.#windowMs / 1000));
  }

  close(): void {
    clearInterval(this.#timer);
  }
}
