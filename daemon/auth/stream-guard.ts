import { Counter, type Registry } from 'prom-client';
import type { Role } from '../../src/api/schemas/auth.ts';
import type { PodMessages } from '../cluster/pod-messages.ts';
import type { DaemonConfig } from '../config.ts';
import type { Logger } from '../logger.ts';
import type { ApiKeys } from './api-keys.ts';
import type { Principal } from './principal.ts';
import type { Sessions } from './sessions.ts';

type UserPrincipal = Extract<Principal, { kind: 'user' }>;
/** What ends a stream: its response's `end` (the stream's own 'close' handler then cleans up). */
export interface GuardedResponse {
  end(): unknown;
  once(event: 'close', listener: () => void): unknown;
  readonly writableEnded: boolean;
  readonly destroyed: boolean;
}
export type EndReason = 'credentials' | 'expired' | 'lifetime';

interface Watched {
  res: GuardedResponse;
  principal: UserPrincipal;
  timer: NodeJS.Timeout;
}

/** The tables whose writes may change what an open stream's credential grants (triggers of migration 0015). */
export const CREDENTIAL_TABLES = ['api_keys', 'users', 'sessions'];

/** Ids per query when open streams are checked: far below any database's limit on bound parameters. */
const BATCH = 500;
/** A check the database failed is tried again after this long. */
const RETRY_MS = 1_000;
/** Lifetimes are spread over the last tenth of the maximum, so streams opened together (a restart) do not all reconnect at once. */
const JITTER = 0.1;

/**
 * Open authenticated streams (SSE) and the credential each was opened with.
 * A stream ends when its credential no longer grants what it granted then:
 * the key is revoked or expired, the session logged out or timed out, the
 * user demoted or deleted (its keys and sessions go with it). Told by
 * `changed()`: this daemon's own writes call it, and on PostgreSQL every
 * pod's writes do through the table triggers of migration 0015, whoever
 * wrote. Expiry needs no news: each stream has one timer, at its credential's
 * expiry or its maximum lifetime, whichever comes first. The client then
 * reconnects and is authorized again (401 or 403 if it no longer may).
 */
export class StreamGuard {
  readonly #keys: ApiKeys;
  readonly #sessions: Sessions;
  readonly #maxLifetimeMs: number;
  readonly #log: Logger;
  readonly #streams = new Set<Watched>();
  readonly #ended: Counter<'reason'>;
  #generation = 0;
  #checking: Promise<void> | undefined;
  #again = false;

  constructor(keys: ApiKeys, sessions: Sessions, opts: { maxLifetimeMs: number; log: Logger; registry: Registry }) {
    this.#keys = keys;
    this.#sessions = sessions;
    this.#maxLifetimeMs = opts.maxLifetimeMs;
    this.#log = opts.log;
    this.#ended = new Counter({
      name: 'monctl_sse_streams_ended_total',
      labelNames: ['reason'] as const,
      registers: [opts.registry],
      help: 'Authenticated streams the daemon ended: credentials (revoked, logged out, user demoted or deleted), expired (key or session), lifetime (--stream-max-lifetime)',
    });
    for (const reason of ['credentials', 'expired', 'lifetime'] as const) this.#ended.inc({ reason }, 0);
  }

  /** Read before a request's credential is: `watch` compares it, so that a change in between is not missed. */
  get generation(): number {
    return this.#generation;
  }

  /** Guards an open stream of `principal`, whose credential was read at `generation`. */
  watch(res: GuardedResponse, principal: Principal, generation: number): void {
    if (principal.kind !== 'user' || res.writableEnded || res.destroyed) return;
    const lifetime = this.#maxLifetimeMs * (1 - JITTER * Math.random());
    const expiresIn = principal.expiresAt == null ? Infinity : principal.expiresAt - Date.now();
    const reason: EndReason = expiresIn <= lifetime ? 'expired' : 'lifetime';
    const watched: Watched = {
      res,
      principal,
      timer: setTimeout(() => this.#end(watched, reason), Math.max(0, Math.min(expiresIn, lifetime))),
    };
    watched.timer.unref();
    this.#streams.add(watched);
    res.once('close', () => this.#forget(watched));
    if (generation !== this.#generation) this.changed();
  }

  /** Credentials may have changed (keys, users or sessions were written): every open stream is checked, once per burst. */
  changed(): void {
    this.#generation++;
    if (this.#checking) {
      this.#again = true;
      return;
    }
    this.#checking = this.#checkAll()
      .catch((err) => {
        // The streams stay open meanwhile (a reconnect could not be authorized either), until a check passes or their lifetime ends.
        this.#log.warn({ err }, 'checking the credentials of open streams failed; retrying in a second');
        setTimeout(() => this.changed(), RETRY_MS).unref();
      })
      .finally(() => {
        this.#checking = undefined;
        if (this.#again) {
          this.#again = false;
          this.changed();
        }
      });
  }

  /** Shutdown: the timers go (the streams themselves end with every other stream). */
  stop(): void {
    for (const watched of this.#streams) clearTimeout(watched.timer);
    this.#streams.clear();
  }

  async #checkAll(): Promise<void> {
    if (this.#streams.size === 0) return;
    const streams = [...this.#streams];
    const keyIds = [...new Set(streams.flatMap((w) => (w.principal.keyId === null ? [] : [w.principal.keyId])))];
    const hashes = [...new Set(streams.flatMap((w) => (w.principal.sessionHash === null ? [] : [w.principal.sessionHash])))];
    const keyRoles = new Map<number, Role>();
    const sessionRoles = new Map<string, Role>();
    for (let i = 0; i < keyIds.length; i += BATCH) {
      for (const [id, role] of await this.#keys.rolesOf(keyIds.slice(i, i + BATCH))) keyRoles.set(id, role);
    }
    for (let i = 0; i < hashes.length; i += BATCH) {
      for (const [hash, role] of await this.#sessions.rolesOf(hashes.slice(i, i + BATCH))) sessionRoles.set(hash, role);
    }
    for (const watched of streams) {
      const { keyId, sessionHash, role } = watched.principal;
      const now = keyId !== null ? keyRoles.get(keyId) : sessionHash !== null ? sessionRoles.get(sessionHash) : undefined;
      // Any other role ends the stream too: what it carries (which resources, which operations) depended on the old one.
      if (now !== role) this.#end(watched, 'credentials');
    }
  }

  #end(watched: Watched, reason: EndReason): void {
    if (!this.#streams.has(watched)) return;
    this.#forget(watched);
    this.#ended.inc({ reason });
    const { username, via, keyId } = watched.principal;
    this.#log.debug({ username, via, keyId, reason }, 'stream ended for its credential; the client reconnects and is authorized again');
    watched.res.end();
  }

  #forget(watched: Watched): void {
    clearTimeout(watched.timer);
    this.#streams.delete(watched);
  }
}

/**
 * The daemon's guard. On PostgreSQL it follows the credential tables whatever
 * wrote them (any pod, `reset-admin`, an operator's SQL). On SQLite this
 * daemon's own writes tell it; a `reset-admin` run beside it revokes the old
 * key's streams at their maximum lifetime.
 */
export function guardStreams(
  keys: ApiKeys,
  sessions: Sessions,
  config: DaemonConfig,
  log: Logger,
  registry: Registry,
  cluster?: PodMessages,
): StreamGuard {
  const guard = new StreamGuard(keys, sessions, { maxLifetimeMs: config.streamMaxLifetimeMs, log, registry });
  cluster?.onTables(CREDENTIAL_TABLES, () => guard.changed());
  return guard;
}
