import type { DaemonContext } from '../context.ts';
import { getRegistryCredential } from './registry-credentials-store.ts';
import { createProbeRunner, type Prober } from '../../src/probes/runner.ts';
import { defaultProbeConfig } from '../config/probe-config.ts';

export type { Prober };

const probers = new WeakMap<DaemonContext, Prober>();

/**
 * The prober of a daemon: one per context, so connection pools and token
 * caches are shared by every check. The check code itself is shared with the
 * agent (src/probes/runner.ts); the daemon adds its stored registry credentials.
 */
export function getProber(ctx: DaemonContext): Prober {
  let prober = probers.get(ctx);
  if (!prober) {
    prober = createProbeRunner({
      timeoutMs: (ctx.config.probes ?? defaultProbeConfig()).httpTimeoutMs,
      credential: (registry) => getRegistryCredential(ctx, registry),
      onBug: (err, input) => ctx.log.error({ err, resourceId: input.resourceId }, 'probe failed unexpectedly'),
    });
    probers.set(ctx, prober);
  }
  return prober;
}
