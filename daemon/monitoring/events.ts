import type { resourceOperations } from '../../src/api/ops/resources.ts';
import { MONITORING_CHANNEL, type ResourceType } from '../../src/api/schemas/monitoring.ts';
import type { CheckStatus } from '../../src/api/schemas/monitoring.ts';
import { formatNullable } from '../../src/time.ts';
import type { HubEvent } from '../events/channel.ts';
import { serveStream } from '../events/sse.ts';
import type { RequestContext } from '../http/bind.ts';
import { effectiveStatus } from '../probes/results.ts';
import type { MonitoringState } from './state.ts';
import { mayEnter, visibleTo } from './visibility.ts';

/**
 * `GET /api/events`: `SNAPSHOT` of the resources the caller may see, then
 * `CHECK_COMPLETED` and `STATUS_CHANGED` for those resources. ADMIN sees every
 * resource (as with history); others by the seed's visibility rules, checked
 * per event against the in-memory visibility cache so the filter stays cheap.
 */
export async function monitoringEvents(
  state: MonitoringState,
  { ctx, principal, req, res }: RequestContext<typeof resourceOperations.monitoringEvents>,
): Promise<void> {
  const admin = principal.kind === 'user' && principal.role === 'ADMIN';
  const filter = admin
    ? undefined
    : (event: HubEvent) => {
        const id = (event.data as { resourceId?: unknown }).resourceId;
        const visibility = typeof id === 'number' ? state.visibility.get(id) : undefined;
        return visibility !== undefined && mayEnter(principal, visibility) ? event.data : undefined;
      };
  const snapshot = async () => {
    let query = ctx.db.selectFrom('resources').selectAll().orderBy('id');
    if (!admin) query = query.where(visibleTo(principal));
    const rows = await query.execute();
    return {
      resources: rows.map((row) => ({
        resourceId: row.id,
        name: row.name,
        resourceType: row.resource_type as ResourceType,
        currentStatus: effectiveStatus(row.active, row.current_status),
        latestCheckStatus: row.latest_check_status as CheckStatus | null,
        latestCheckedAt: formatNullable(row.latest_checked_at),
        latestMessage: row.latest_message,
        latestErrorCode: row.latest_error_code,
      })),
    };
  };
  await serveStream(req, res, ctx.events.channel(MONITORING_CHANNEL), {
    filter,
    snapshot,
    heartbeatMs: ctx.config.sseHeartbeatMs,
    maxQueuedBytes: ctx.config.sseMaxQueuedBytes,
  });
}
