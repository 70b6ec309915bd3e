import type { Logger } from '../logger.ts';
import { createProbeRunner, type CredentialLookup, type Prober } from '../../src/probes/runner.ts';

export type { Prober };

/** What the prober uses of the daemon. */
export interface ProberDeps {
  /** The httpTimeout setting. */
  timeoutMs: number;
  /** The maxBodyBytes setting. */
  maxBodyBytes: number;
  /** The stored registry credentials (the daemon passes monitoring's store). */
  credential: CredentialLookup;
  log: Logger;
}

/**
 * The prober of a daemon (`ctx.prober`), built once by daemon/services.ts, so
 * connection pools and token caches are shared by every check, scheduled or
 * on demand; closed after the modules stop. The check code itself is shared
 * with the agent (src/probes/runner.ts); the daemon adds its stored registry
 * credentials.
 */
export function createDaemonProber(deps: ProberDeps): Prober {
  return createProbeRunner({
    timeoutMs: deps.timeoutMs,
    maxBodyBytes: deps.maxBodyBytes,
    credential: deps.credential,
    onBug: (err, input) => deps.log.error({ err, resourceId: input.resourceId }, 'probe failed unexpectedly'),
  });
}
