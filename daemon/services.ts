import { createNotifierDispatcher } from './alerts/notifiers/http-post.ts';
import { MaintenanceCache } from './alerts/maintenance/cache.ts';
import { OidcIssuer } from './auth/oidc/issuer.ts';
import { PodIdentity } from './cluster/pod-identity.ts';
import type { DaemonContext } from './context.ts';
import { getRegistryCredential } from './probes/registry-credentials-store.ts';
import { createDaemonProber } from './probes/prober.ts';
import { RouteLogWriter } from './tunnel-admin/route-log-store.ts';
import { systemClock, TestClock } from './util/clock.ts';

/** The shared services of a daemon, as they sit on its context. */
export type Services = Pick<DaemonContext, 'pod' | 'prober' | 'notifierPool' | 'maintenance' | 'routeLog' | 'clock' | 'oidc'>;

/** What the services are built from: the infrastructure part of the context. */
export type ServiceDeps = Pick<DaemonContext, 'config' | 'db' | 'log' | 'bus' | 'events' | 'installSecret'>;

export interface RunningServices {
  services: Services;
  /** Stops them in reverse build order; never throws (a failure is logged). */
  stop(): Promise<void>;
}

/**
 * Part of the composition root (daemon.ts): builds the services that several
 * capabilities share, once, in this order, before any module exists, so that
 * no module creates one for the others. The maintenance windows are read once
 * here, before the listeners accept. Modules stop first; then these, in
 * reverse order, before the database closes.
 */
export async function startServices(deps: ServiceDeps): Promise<RunningServices> {
  const { config, log } = deps;
  const pod = new PodIdentity(config);
  const clock = config.testClock ? new TestClock() : systemClock;
  const prober = createDaemonProber({
    timeoutMs: config.probes.httpTimeoutMs,
    maxBodyBytes: config.probes.maxBodyBytes,
    log,
    credential: (registry) => getRegistryCredential(deps, registry),
  });
  const notifierPool = createNotifierDispatcher(config.notifierTimeoutMs);
  const maintenance = new MaintenanceCache(deps);
  const routeLog = new RouteLogWriter(deps);
  const oidcSettings = config.identity.oidc;
  const oidc = oidcSettings ? new OidcIssuer(oidcSettings, log) : undefined;
  const stops: Array<[string, () => Promise<void> | void]> = [
    ['prober', () => prober.close()],
    ['notifier pool', () => notifierPool.close()],
    ['maintenance', () => maintenance.stop()],
    ['route log', () => routeLog.close()],
  ];
  const stop = async () => {
    for (const [name, close] of stops.toReversed()) {
      try {
        await close();
      } catch (err) {
        log.error({ err, service: name }, 'service failed to stop');
      }
    }
  };
  try {
    await maintenance.ready();
    maintenance.start();
  } catch (err) {
    await stop();
    throw err;
  }
  return { services: { pod, prober, notifierPool, maintenance, routeLog, clock, ...(oidc ? { oidc } : {}) }, stop };
}
