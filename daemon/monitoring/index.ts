import type { ModuleFactory } from '../module.ts';
import { announcementHandlers } from './announcements.ts';
import { corsHandlers, CorsList } from './cors.ts';
import { groupHandlers } from './groups.ts';
import { registerMonitoringMetrics } from './metrics.ts';
import { registryCredentialHandlers } from './registry-credentials.ts';
import { resourceHandlers } from './resources.ts';
import { ReadCache } from './read-cache.ts';
import type { MonitoringState } from './state.ts';
import { VisibilityCache } from './visibility.ts';

/**
 * The monitoring API (docs/API.md#resources): resources, groups
 * and visibility, check history, announcements, CORS, registry credentials
 * and `/api/events`. Probing and scheduling belong to the probes capability.
 */
export const monitoringModule: ModuleFactory = async (ctx) => {
  const reads = new ReadCache();
  const state: MonitoringState = { visibility: new VisibilityCache(ctx, () => reads.invalidateAll()), cors: new CorsList(ctx), reads };
  const unfollow = reads.follow(ctx);
  await Promise.all([state.visibility.reload(), state.cors.reload()]);
  // Pods: what another pod wrote reaches these caches on commit (cluster/pod-messages.ts).
  ctx.cluster?.onTables(['groups', 'resource_groups', 'resources'], () => state.visibility.reload());
  ctx.cluster?.onTables(['cors_origins'], () => state.cors.reload());
  // A resource created outside these handlers (a ping's `?create=1`, daemon/push/) reaches the event filter.
  const learn = ({ id }: { id: number }) => {
    if (state.visibility.get(id) === undefined)
      state.visibility.refresh(id).catch((err) => ctx.log.warn({ err }, 'visibility refresh failed'));
  };
  ctx.bus.on('resource.changed', learn);
  let visibilityTimer: NodeJS.Timeout | undefined;
  registerMonitoringMetrics(ctx);
  return {
    name: 'monitoring',
    middleware: [state.cors.middleware()],
    handlers: {
      ...resourceHandlers(state),
      ...groupHandlers(state),
      ...announcementHandlers,
      ...corsHandlers(state.cors),
      ...registryCredentialHandlers,
    },
    start() {
      state.cors.start();
      // Resources changed through another pod on the same database reach the event filter within a minute.
      // One daemon alone sees every change on its bus: no periodic read of every resource.
      if (ctx.cluster) {
        visibilityTimer = setInterval(
          () => state.visibility.reload().catch((err) => ctx.log.warn({ err }, 'visibility reload failed')),
          60_000,
        );
        visibilityTimer.unref();
      }
    },
    stop() {
      state.cors.stop();
      clearInterval(visibilityTimer);
      ctx.bus.off('resource.changed', learn);
      unfollow();
    },
  };
};
