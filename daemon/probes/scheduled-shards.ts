import { hostname } from 'node:os';
import type { DaemonContext } from '../context.ts';
import type { Scheduler } from './scheduler.ts';
import { SHARDS } from '../store/migrations/0012-pods.ts';
import { ShardLeases } from '../cluster/shard-leases.ts';

/**
 * Shard leases driving a scheduler: shards gained are adopted (their active
 * resources scheduled on their own grid), shards lost are released (their
 * next due times written for the next holder).
 */
export function scheduledShards(ctx: DaemonContext, scheduler: () => Scheduler): ShardLeases {
  const { host, port } = ctx.config.listen;
  // The URL other pods reach this one at (tunnel relays): a wildcard listen is reached by the host's name.
  const reachable = (h: string) => (h === '0.0.0.0' || h === '::' || h === '' ? hostname() : h.includes(':') ? `[${h}]` : h);
  return new ShardLeases(
    ctx,
    {
      gained: (shards) => scheduler().adopt((eb) => eb(eb('id', '%', SHARDS), 'in', shards)),
      lost: () =>
        scheduler()
          .release()
          .catch((err) => ctx.log.warn({ err }, 'writing the next due times of released shards failed')),
    },
    {
      podName: ctx.pod.name,
      apiUrl: `${ctx.config.tls ? 'https' : 'http'}://${reachable(host)}:${port}`,
      edgeUrl: `http://${reachable(ctx.config.edgeListen.host)}:${ctx.config.edgeListen.port}`,
      resources: () => scheduler().stats().scheduled,
      checksTotal: () => scheduler().started,
    },
  );
}
