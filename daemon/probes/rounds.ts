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
 * One round: the same check at every location of a resource, at once (checkAt). Never throws: a
 * location that cannot check is `unknown` with the reason.
 */
export async function runRound(
  ctx: RoundDeps,
  prober: Prober,
  input: CheckInput,
  locations: readonly Location[],
  due: number,
  started?: StartObserver,
): Promise<LocationCheck[]> {
  return Promise.all(locations.map((location) => checkAt(ctx, prober, input, location, { due, started })));
}

/**
 * One check at one location, now. The daemon's runs here; an agent's goes over its tunnel session
 * (ctx.tunnel.probeAgent) with the resource's request (its secrets opened, for this check only) and
 * the stored registry credential of a DOCKER target's registry. `report` asks for the condition
 * outcomes and the response (`POST /admin/api/resources/test`); `due` and `started` feed the lag
 * histogram of scheduled checks. Never throws: a location that cannot check is `unknown` with the reason.
 */
export async function checkAt(
  ctx: RoundDeps,
  prober: Prober,
  input: CheckInput,
  location: Location,
  opts: { report?: boolean; due?: number; started?: StartObserver } = {},
): Promise<LocationCheck> {
  if (input.unopened) return notChecked(location, input.unopened);
  if (location.agentId === 0) return { location, ran: true, result: await prober.probe(input, { report: opts.report }) };
  try {
    const check = await remoteCheck(ctx, input, opts.report ?? false);
    const sentAt = Date.now();
    const outcome = await ctx.tunnel.probeAgent(location.agentId, location.name, check);
    if (!outcome.ran) return notChecked(location, outcome.message);
    if (opts.due !== undefined) opts.started?.(location, sentAt - opts.due + outcome.waitedMs);
    const { ran: _ran, waitedMs: _waited, ...result } = outcome;
    return { location, ran: true, result: { ...result, checkedAt: Date.now() } };
  } catch (err) {
    ctx.log.error({ err, resourceId: input.resourceId, agentId: location.agentId }, 'remote check failed unexpectedly');
    return notChecked(location, `internal error: ${(err as Error).message}`);
  }
}

/**
 * The check as an agent is sent it: the daemon's timeout and body cap, the resource's conditions
 * and request (each only when set: a seed resource's check needs no more than protocol 1), and a
 * DOCKER registry's stored credential.
 */
async function remoteCheck(ctx: RoundDeps, input: ProbeInput, report: boolean): Promise<RemoteCheck> {
  const { httpTimeoutMs: timeoutMs, maxBodyBytes } = ctx.config.probes;
  // The body cap goes with every check, so that the agent builds one runner (one set of pools) for all of them.
  const check: RemoteCheck = {
    type: input.type,
    target: input.target,
    skipTLS: input.skipTLS,
    recursive: input.recursive,
    timeoutMs,
    maxBodyBytes,
  };
  if (input.resourceId) check.resourceId = input.resourceId;
  if (input.conditions?.length) check.conditions = input.conditions;
  if (input.http) check.http = input.http;
  if (input.options) check.options = input.options;
  if (input.timeoutMs !== undefined) check.checkTimeoutMs = input.timeoutMs;
  if (input.upsideDown) check.upsideDown = true;
  if (report) check.report = true;
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
