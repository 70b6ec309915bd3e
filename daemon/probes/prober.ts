import type { DaemonContext } from '../context.ts';
import { getRegistryCredential } from '../monitoring/registry-credentials-store.ts';
import { defaultProbeConfig } from './config.ts';
import { createDispatchers, type Dispatchers } from './dispatchers.ts';
import { probeDocker } from './docker/docker-probe.ts';
import { RegistryState } from './docker/state.ts';
import { probeHttp } from './http-probe.ts';
import type { ProbeInput, ProbeResult } from './types.ts';
import { probeTcp } from './tcp-probe.ts';

/** Runs one check of one target; never throws, never writes. */
export interface Prober {
  probe(input: ProbeInput): Promise<ProbeResult>;
  /** Closes the pooled connections (the probes module calls it on stop). */
  close(): Promise<void>;
}

const probers = new WeakMap<DaemonContext, Prober>();

/** The prober of a daemon: one per context, so connection pools and token caches are shared by every check. */
export function getProber(ctx: DaemonContext): Prober {
  let prober = probers.get(ctx);
  if (!prober) {
    prober = createProber(ctx);
    probers.set(ctx, prober);
  }
  return prober;
}

function createProber(ctx: DaemonContext): Prober {
  const timeoutMs = (ctx.config.probes ?? defaultProbeConfig()).httpTimeoutMs;
  let dispatchers: Dispatchers | undefined;
  const pools = () => (dispatchers ??= createDispatchers(timeoutMs));
  const state = new RegistryState();
  const credential = (registry: string) => getRegistryCredential(ctx, registry);

  return {
    async probe(input) {
      const started = performance.now();
      let outcome: Omit<ProbeResult, 'durationMs' | 'checkedAt'>;
      try {
        switch (input.type) {
          case 'HTTP':
            outcome = await probeHttp(input.target, input.skipTLS, pools(), timeoutMs);
            break;
          case 'TCP':
            outcome = await probeTcp(input.target, timeoutMs);
            break;
          case 'DOCKER':
            outcome = await probeDocker(input.target, input.skipTLS, input.recursive, { dispatchers: pools(), state, timeoutMs, credential });
            break;
          default:
            outcome = { status: 'NOT_AVAILABLE', message: `unknown resource type ${String(input.type)}`, errorCode: 'CONNECTION_ERROR' };
        }
      } catch (err) {
        // The probes catch their own failures; this is a bug guard, not a code path.
        ctx.log.error({ err, resourceId: input.resourceId }, 'probe failed unexpectedly');
        outcome = { status: 'UNKNOWN', message: `internal error: ${(err as Error)?.message}`, errorCode: 'CONNECTION_ERROR' };
      }
      const durationMs = Math.max(0, Math.round(performance.now() - started));
      return { ...outcome, durationMs, checkedAt: Date.now() };
    },
    async close() {
      const d = dispatchers;
      dispatchers = undefined;
      await d?.close();
    },
  };
}
