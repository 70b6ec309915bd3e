import { parseImageReference, parseNamespace } from '../../src/probes/docker/reference.ts';
import type { RemoteCheck } from '../../src/tunnel/probe-protocol.ts';
import type { DaemonConfig } from '../config.ts';
import type { DaemonContext } from '../context.ts';
import { getRegistryCredential } from './registry-credentials-store.ts';
import { type Location, type LocationCheck, notChecked } from './locations.ts';
import type { Prober } from './prober.ts';
import type { CheckInput } from './probe-input.ts';
import type { ProbeInput } from './types.ts';

/** What a round uses of the daemon: the tunnel to the agents, and the stored registry credentials. */
export type RoundDeps = Pick<DaemonContext, 'db' | 'log' | 'installSecret' | 'tunnel'> & { config: Pick<DaemonConfig, 'probes'> };

/** When a location's check started, for the lag histogram (`delayMs` past its due time). */
export type StartObserver = (location: Location, delayMs: number) => void;

/**
 * One round: the same check at every location of a resource, at once. The
 * daemon's own runs here; an agent's goes over its tunnel session
 * (ctx.tunnel.probeAgent) with the stored registry credential of a DOCKER
 * target's registry, sent with this check only. Never throws: a location that
 * cannot check is `unknown` with the reason.
 */
export async function runRound(
  ctx: RoundDeps,
  prober: Prober,
  input: CheckInput,
  locations: readonly Location[],
  due: number,
  started?: StartObserver,
): Promise<LocationCheck[]> {
  const { unopened } = input;
  return Promise.all(
    locations.map(async (location): Promise<LocationCheck> => {
      if (unopened) return notChecked(location, unopened);
      if (location.agentId === 0) return { location, ran: true, result: await prober.probe(input) };
      try {
        const check = await remoteCheck(ctx, input);
        const sentAt = Date.now();
        const outcome = await ctx.tunnel.probeAgent(location.agentId, location.name, check);
        if (!outcome.ran) return notChecked(location, outcome.message);
        started?.(location, sentAt - due + outcome.waitedMs);
        const { ran: _ran, waitedMs: _waited, ...result } = outcome;
        return { location, ran: true, result: { ...result, checkedAt: Date.now() } };
      } catch (err) {
        ctx.log.error({ err, resourceId: input.resourceId, agentId: location.agentId }, 'remote check failed unexpectedly');
        return notChecked(location, `internal error: ${(err as Error).message}`);
      }
    }),
  );
}

/** The check as an agent is sent it: the daemon's timeout, and a DOCKER registry's stored credential. */
async function remoteCheck(ctx: RoundDeps, input: ProbeInput): Promise<RemoteCheck> {
  const timeoutMs = ctx.config.probes.httpTimeoutMs;
  const check: RemoteCheck = { type: input.type, target: input.target, skipTLS: input.skipTLS, recursive: input.recursive, timeoutMs };
  if (input.type !== 'DOCKER') return check;
  let registry: string;
  try {
    registry = input.recursive ? parseNamespace(input.target).registry : parseImageReference(input.target).registry;
  } catch {
    return check; // the agent reports the bad reference itself
  }
  const credential = await getRegistryCredential(ctx, registry);
  if (credential) check.credential = { registry, ...credential };
  return check;
}
