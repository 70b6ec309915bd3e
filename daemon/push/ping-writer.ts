import { HttpError, notFound } from '../../src/errors.ts';
import type { PingKind } from '../../src/api/schemas/push.ts';
import type { DaemonContext } from '../context.ts';
import { type ResultWriterDeps, type RoundRecord, recordResults } from '../probes/results.ts';
import type { PingBody } from './ping-body.ts';
import type { ParsedPing } from './ping-path.ts';
import { findKeys, findTargets, membership, type PingKeyRow, type PingTarget, type PushUpdate, writeUpdates } from './ping-store.ts';
import { pingResult } from './ping-verdict.ts';
import type { RateLimiter } from './rate-limit.ts';
import { lateAfterFinish, lateAfterStart } from './schedule.ts';

/** One ping as it arrived: parsed, its body read, its time taken from the daemon's clock. */
export interface ArrivedPing {
  parsed: ParsedPing;
  at: number;
  sourceIp: string;
  userAgent: string | null;
  body: PingBody;
}

/** A recorded ping's kind, or the refusal to answer with. */
export type PingOutcome = { kind: PingKind } | { error: HttpError };

export interface PingWriterOptions {
  /** Pings waiting at most; past it a ping is refused with 503 and Retry-After. */
  maxQueued: number;
  /** Body bytes waiting at most, likewise. */
  maxQueuedBytes: number;
  /** Pings per batch: one transaction for the deadlines, one for the history. */
  maxBatch: number;
  /** Per push check; its buckets are keyed by resource id. */
  perCheck: RateLimiter;
  /** `?create=1` with a key that allows it: creates the push check for `slug`. */
  create?: (key: PingKeyRow, slug: string) => Promise<void>;
}

export type PingWriterDeps = ResultWriterDeps & Pick<DaemonContext, 'bus' | 'log'>;

interface Queued {
  ping: ArrivedPing;
  settle(outcome: PingOutcome): void;
}

const USER_AGENT_CHARS = 256;
const busy = () => new HttpError(503, 'busy', 'Too many pings waiting to be recorded; retry shortly', { headers: { 'Retry-After': '1' } });

/**
 * Records pings in batches (docs/DECISIONS.md, "Push checks: pings"): while one batch is written
 * the next gathers, so the write rate follows the ping rate with a few statements per batch
 * rather than per ping. Each ping is answered once its batch has committed.
 */
export class PingWriter {
  readonly #deps: PingWriterDeps;
  readonly #opts: PingWriterOptions;
  #queue: Queued[] = [];
  #queuedBytes = 0;
  #writing: Promise<void> | undefined;

  constructor(deps: PingWriterDeps, opts: PingWriterOptions) {
    this.#deps = deps;
    this.#opts = opts;
  }

  /** Queues a ping; resolves once it is recorded (or refused: unknown, rate-limited, busy). */
  submit(ping: ArrivedPing): Promise<PingOutcome> {
    if (this.#queue.length >= this.#opts.maxQueued || this.#queuedBytes + ping.body.bytes > this.#opts.maxQueuedBytes) {
      return Promise.resolve({ error: busy() });
    }
    return new Promise((settle) => {
      this.#queue.push({ ping, settle });
      this.#queuedBytes += ping.body.bytes;
      this.#writing ??= this.#loop();
    });
  }

  /** Resolves once every queued ping is written (shutdown). */
  async drain(): Promise<void> {
    await this.#writing;
  }

  async #loop(): Promise<void> {
    while (this.#queue.length > 0) {
      const batch = this.#queue.splice(0, this.#opts.maxBatch);
      for (const q of batch) this.#queuedBytes -= q.ping.body.bytes;
      try {
        const outcomes = await this.#write(batch.map((q) => q.ping));
        batch.forEach((q, i) => q.settle(outcomes[i]));
      } catch (err) {
        this.#deps.log.error({ err, pings: batch.length }, 'push: recording pings failed');
        const error = new HttpError(503, 'unavailable', 'The ping could not be recorded; retry shortly', {
          headers: { 'Retry-After': '1' },
        });
        for (const q of batch) q.settle({ error });
      }
    }
    this.#writing = undefined;
  }

  /** The batch's targets: by uuid, or by key and slug (a group's key reaches its own checks only). */
  async #resolve(pings: ArrivedPing[]): Promise<Array<PingTarget | undefined>> {
    const refs = pings.map((p) => p.parsed.ref);
    const uuids = [...new Set(refs.flatMap((r) => ('uuid' in r ? [r.uuid] : [])))];
    const slugRefs = refs.flatMap((r) => ('key' in r ? [r] : []));
    const keys = await findKeys(this.#deps.db, [...new Set(slugRefs.map((r) => r.key))]);
    const wanted = [...new Set(slugRefs.filter((r) => keys.has(r.key)).map((r) => r.slug))];
    let found = await findTargets(this.#deps.db, uuids, wanted);
    const create = this.#opts.create;
    const missing = pings.filter(
      (p) => 'key' in p.parsed.ref && p.parsed.create && keys.get(p.parsed.ref.key)?.allowCreate && !found.bySlug.has(p.parsed.ref.slug),
    );
    if (create && missing.length > 0) {
      const made = new Set<string>();
      for (const p of missing) {
        const ref = p.parsed.ref as { key: string; slug: string };
        if (made.has(ref.slug)) continue;
        made.add(ref.slug);
        await create(keys.get(ref.key)!, ref.slug);
      }
      found = await findTargets(this.#deps.db, uuids, wanted);
    }
    const groupKeyed = slugRefs.filter((r) => keys.get(r.key)?.groupId != null && found.bySlug.has(r.slug));
    const members = await membership(
      this.#deps.db,
      groupKeyed.map((r) => found.bySlug.get(r.slug)!.resourceId),
    );
    return refs.map((ref) => {
      if ('uuid' in ref) return found.byUuid.get(ref.uuid);
      const key = keys.get(ref.key);
      const target = key && found.bySlug.get(ref.slug);
      if (!key || !target) return undefined;
      return key.groupId === null || members.has(`${target.resourceId}:${key.groupId}`) ? target : undefined;
    });
  }

  async #write(pings: ArrivedPing[]): Promise<PingOutcome[]> {
    const targets = await this.#resolve(pings);
    const outcomes: PingOutcome[] = [];
    const updates = new Map<number, PushUpdate>();
    const startedAt = new Map<number, number | null>();
    const items: RoundRecord[] = [];
    const now = performance.now();
    pings.forEach((ping, i) => {
      const target = targets[i];
      if (!target) {
        this.#deps.log.debug({ ref: ping.parsed.ref }, 'push: ping for an unknown check');
        outcomes.push({ error: notFound('No push check with this UUID (or key and slug)') });
        return;
      }
      const wait = this.#opts.perCheck.take(String(target.resourceId), now);
      if (wait > 0) {
        outcomes.push({ error: tooMany(wait, 'this check') });
        return;
      }
      const { kind, exitCode } = ping.parsed;
      const id = target.resourceId;
      const started = startedAt.has(id) ? startedAt.get(id)! : target.startedAt;
      const finish = kind === 'success' || kind === 'fail';
      const runMs = finish && started !== null && ping.at >= started ? ping.at - started : null;
      if (finish) {
        updates.set(id, {
          resourceId: id,
          lastPingAt: ping.at,
          lastPingKind: kind,
          startedAt: null,
          lateAt: lateAfterFinish(target.schedule, ping.at),
        });
        startedAt.set(id, null);
      } else if (kind === 'start') {
        updates.set(id, { resourceId: id, startedAt: ping.at, lateAt: lateAfterStart(target.schedule, ping.at) });
        startedAt.set(id, ping.at);
      }
      const body = ping.body;
      const result = pingResult(
        { kind, exitCode, at: ping.at, runMs, body: body.text, bodyTruncated: body.truncated },
        target.conditions,
        target.latestCheckStatus,
      );
      items.push({
        resourceId: id,
        result,
        ping: {
          detail: {
            kind,
            exitCode,
            sourceIp: ping.sourceIp,
            userAgent: ping.userAgent?.slice(0, USER_AGENT_CHARS) ?? null,
            runMs,
            bodyBytes: body.bytes,
            bodyTruncated: body.truncated,
          },
          body: body.text,
        },
        // A paused check keeps its history and its deadline state, as in Healthchecks, but no status moves.
        historyOnly: !finish || !target.active,
      });
      outcomes.push({ kind });
    });
    await writeUpdates(this.#deps.db, [...updates.values()]);
    await recordResults(this.#deps, items);
    for (const id of updates.keys()) this.#deps.bus.emit('push.pinged', { id });
    return outcomes;
  }
}

/** 429 with the seconds to wait. */
export function tooMany(retryAfter: number, what: string): HttpError {
  return new HttpError(429, 'rate-limited', `Too many pings for ${what}; retry in ${retryAfter} s`, {
    headers: { 'Retry-After': String(retryAfter) },
  });
}
