import type { Kysely } from 'kysely';
import type { ApiKeys } from './auth/api-keys.ts';
import type { Bus } from './bus.ts';
import type { LoginThrottle } from './auth/login-throttle.ts';
import type { Sessions } from './auth/sessions.ts';
import type { StreamGuard } from './auth/stream-guard.ts';
import type { DaemonConfig } from './config.ts';
import type { EventHub } from './events/channel.ts';
import type { PodMessages } from './cluster/pod-messages.ts';
import type { Logger } from './logger.ts';
import type { Metrics } from './metrics/metrics.ts';
import type { Database } from './store/schema.ts';
import type { TunnelControl } from './tunnel-control.ts';
import type { OpenedStore } from './store/store.ts';

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
  /** The data plane, as the control plane sees it (replaced by the tunnel capability). */
  tunnel: TunnelControl;
  /** Set while the daemon drains for shutdown. */
  draining: boolean;
}
