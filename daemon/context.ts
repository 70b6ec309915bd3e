import type { Kysely } from 'kysely';
import type { Agent } from 'undici';
import type { Prober } from '../src/probes/runner.ts';
import type { ApiKeys } from './auth/api-keys.ts';
import type { Bus } from './bus.ts';
import type { LoginThrottle } from './auth/login-throttle.ts';
import type { Sessions } from './auth/sessions.ts';
import type { StreamGuard } from './auth/stream-guard.ts';
import type { DaemonConfig } from './config.ts';
import type { EventHub } from './events/channel.ts';
import type { PodIdentity } from './cluster/pod-identity.ts';
import type { PodMessages } from './cluster/pod-messages.ts';
import type { Logger } from './logger.ts';
import type { Metrics } from './metrics/metrics.ts';
import type { Database } from './store/schema.ts';
import type { TunnelControl } from './tunnel-control.ts';
import type { OpenedStore } from './store/store.ts';
import type { Clock } from './util/clock.ts';

/** What every capability of the daemon is given. Built once at start. */
export interface DaemonContext {
  config: DaemonConfig;
  db: Kysely<Database>;
  store: OpenedStore;
  log: Logger;
  metrics: Metrics;
  events: EventHub;
  /** In-process notifications between capabilities (resource events reach every pod: cluster/bus-relay.ts). */
  bus: Bus;
  /** Pods sharing a PostgreSQL database: messages between them, and table changes for their caches. Absent on SQLite. */
  cluster?: PodMessages;
  keys: ApiKeys;
  sessions: Sessions;
  /** Open authenticated streams, ended when their credential changes, expires or reaches --stream-max-lifetime. */
  streams: StreamGuard;
  loginThrottle: LoginThrottle;
  installSecret: Uint8Array;
  /** This daemon's pod: its name from the start, its row id once tunnel-admin registered it. */
  pod: PodIdentity;
  // The shared services: built once by daemon/services.ts before the modules, stopped after them in reverse
  // order. Each takes only what it uses of the context, so a test builds one without a daemon. Two of them
  // belong to capabilities, which add their field here themselves, so that this file imports nothing above
  // it (TypeScript merges each `declare module` into this interface): `maintenance`
  // (alerts/maintenance/cache.ts) and `routeLog` (tunnel-admin/route-log-store.ts).
  /** Every check, scheduled or on demand, goes through this one prober (its pools and token caches). */
  prober: Prober;
  /** The HTTP pool of every notifier send (`--notifier-timeout`). */
  notifierPool: Agent;
  /** The data plane, as the control plane sees it (replaced by the tunnel capability). */
  tunnel: TunnelControl;
  /** The clock of what waits on calendar time (push deadlines); a TestClock under --test-clock. */
  clock: Clock;
  /** Set while the daemon drains for shutdown. */
  draining: boolean;
}
