import { ConditionCache, judge } from './check-conditions.ts';
import { LruMap } from '../lru-map.ts';
import { createDispatchers, type Dispatchers } from './dispatchers.ts';
import { type CredentialLookup, probeDocker } from './docker/docker-probe.ts';
import { RegistryState } from './docker/state.ts';
import { probeHttp } from './http-probe.ts';
import { DEFAULT_MAX_BODY_BYTES } from './read-body.ts';
import { probeTcp } from './tcp-probe.ts';
import type { CheckOptionsByType, ProbeInput, ProbeResult, TcpOptions } from './types.ts';
import type { ProtocolProbe, ProtocolProbeContext } from './protocol-probe.ts';
import { probeDns } from './dns-probe.ts';
import { probeGrpc } from './grpc-probe.ts';
import { probePing } from './ping-probe.ts';
import { probeSsh } from './ssh-probe.ts';
import { probeTls } from './tls-probe.ts';
import { probeUdp } from './udp-probe.ts';
import { probeWebSocket } from './websocket-probe.ts';
import { upsideDown } from './upside-down.ts';

/** Runs one check of one target; never throws, never writes. */
export interface Prober {
  /**
   * `credential` replaces the runner's lookup for this check (the agent's credentials come with each check);
   * `report` asks for the condition outcomes and the response (`POST /admin/api/resources/test`).
   */
  probe(input: ProbeInput, opts?: { credential?: CredentialLookup; report?: boolean }): Promise<ProbeResult>;
  /** Closes the pooled connections. */
  close(): Promise<void>;
}

export type { CredentialLookup };

export interface RunnerOptions {
  /** Whole-check timeout of an HTTP or DOCKER request, and of a TCP connect, unless the resource sets its own (`input.timeoutMs`). */
  timeoutMs: number;
  /** Most body bytes read for a `[BODY]` condition, after decoding (`--max-body-bytes`; the agent's runner takes the daemon's, sent with each check that has conditions). */
  maxBodyBytes?: number;
  /** Registry credentials for DOCKER checks, by registry as the target names it. */
  credential: CredentialLookup;
  /** Keep registry Bearer tokens between checks (the daemon); the agent keeps none. */
  cacheTokens?: boolean;
  /** A probe that threw (a bug, not a failed check): logged by the caller. */
  onBug?: (err: unknown, input: ProbeInput) => void;
}

/** The protocol checks by type (docs/API.md#check-types), each given its options with defaults filled in. */
const PROTOCOL_PROBES: {
  [T in keyof CheckOptionsByType | 'SSH']?: ProtocolProbe<T extends keyof CheckOptionsByType ? CheckOptionsByType[T] : null>;
} = {
  DNS: probeDns,
  PING: probePing,
  TLS: probeTls,
  UDP: probeUdp,
  GRPC: probeGrpc,
  WEBSOCKET: probeWebSocket,
  SSH: probeSsh,
};

/** Distinct check timeouts with pools of their own; past it the least recently used set is closed. */
export const MAX_TIMEOUT_POOLS = 16;

/**
 * One set of pools per check timeout. A pool's connect timeout (TCP and the TLS handshake) must
 * be its checks' own: undici does not reject a request that is still waiting for its connection
 * when the request's signal aborts, so a target that accepts and never finishes the handshake
 * would hold a check until the pool's timeout, not the check's (docs/DECISIONS.md#probe-requests).
 * Resources without `timeoutSeconds` share the runner's set; `timeoutSeconds` is whole seconds
 * from 1 to 120, so the sets in use are few.
 */
class PoolsByTimeout {
  // close() on eviction lets the requests under way finish.
  private readonly sets = new LruMap<number, Dispatchers>(MAX_TIMEOUT_POOLS, (evicted) => void evicted.close().catch(() => undefined));

  for(timeoutMs: number): Dispatchers {
    return this.sets.getOrSet(timeoutMs, () => createDispatchers(timeoutMs));
  }

  async close(): Promise<void> {
    const sets = [...this.sets.values()];
    this.sets.clear();
    await Promise.all(sets.map((d) => d.close()));
  }
}

/**
 * The check loop of both the daemon and the agent (one code, so the two
 * cannot drift): HTTP, TCP or DOCKER by type, timed, with one set of pooled
 * connections and one registry state for every check it runs.
 */
export function createProbeRunner(opts: RunnerOptions): Prober {
  const { credential } = opts;
  const pools = new PoolsByTimeout();
  const state = new RegistryState({ cacheTokens: opts.cacheTokens ?? true });
  const parsed = new ConditionCache();
  const maxBodyBytes = opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  return {
    async probe(input, perCheck) {
      const started = performance.now();
      // The resource's own timeout (1–120 s) replaces the runner's for the whole check.
      const timeoutMs = input.timeoutMs ?? opts.timeoutMs;
      let outcome: Omit<ProbeResult, 'durationMs' | 'checkedAt'>;
      try {
        const conditions = parsed.get(input);
        switch (input.type) {
          case 'HTTP':
            outcome = await probeHttp(input.target, input.skipTLS, pools.for(timeoutMs), timeoutMs, {
              conditions,
              maxBodyBytes,
              http: input.http,
              report: perCheck?.report,
            });
            break;
          case 'TCP':
            outcome = await probeTcp(input.target, timeoutMs, conditions, perCheck?.report, input.options as TcpOptions | undefined);
            break;
          case 'DOCKER':
            outcome = await probeDocker(input.target, input.skipTLS, input.recursive, {
              dispatchers: pools.for(timeoutMs),
              state,
              timeoutMs,
              credential: perCheck?.credential ?? credential,
            });
            // Several registry requests: only whether it was reached and how long it took (docs/DECISIONS.md#probe-conditions).
            if (conditions && (outcome.status === 'AVAILABLE' || perCheck?.report)) {
              const outcomes: NonNullable<ProbeResult['report']>['conditions'] = [];
              const judged = judge(conditions, { connected: true, responseTimeMs: performance.now() - started }, outcome, outcomes);
              if (outcome.status === 'AVAILABLE') outcome = judged;
              if (perCheck?.report) outcome = { ...outcome, report: { conditions: outcomes, response: null } };
            }
            break;
          default: {
            const protocol = PROTOCOL_PROBES[input.type as keyof typeof PROTOCOL_PROBES] as ProtocolProbe<unknown> | undefined;
            if (!protocol) {
              outcome = { status: 'NOT_AVAILABLE', message: `unknown resource type ${String(input.type)}`, errorCode: 'CONNECTION_ERROR' };
              break;
            }
            const ctx: ProtocolProbeContext = { timeoutMs, conditions, report: perCheck?.report ?? false, skipTLS: input.skipTLS };
            outcome = await protocol(input.target, input.options ?? null, ctx);
          }
        }
      } catch (err) {
        // The probes catch their own failures; this is a bug guard, not a code path.
        opts.onBug?.(err, input);
        outcome = { status: 'UNKNOWN', message: `internal error: ${(err as Error)?.message}`, errorCode: 'CONNECTION_ERROR' };
      }
      // Asked for a report, always get one (a DOCKER check without conditions has nothing else to show).
      if (perCheck?.report && !outcome.report) outcome = { ...outcome, report: { conditions: [], response: null } };
      if (input.upsideDown) outcome = upsideDown(outcome);
      const durationMs = Math.max(0, Math.round(performance.now() - started));
      return { ...outcome, durationMs, checkedAt: Date.now() };
    },
    close: () => pools.close(),
  };
}
