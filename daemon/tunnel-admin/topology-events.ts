import { TOPOLOGY_CHANNEL, type TopologyEventData, type TopologyEventKind } from '../../src/api/schemas/tunnel.ts';
import type { EventHub } from '../events/channel.ts';

/** The hub channel behind `/admin/sse/routes/{id}/log`. */
export const routeLogChannel = (routeId: number) => `route-log:${routeId}`;

/**
 * Publishes one topology event. Kinds and payloads are those of
 * src/api/schemas/tunnel.ts (TopologyEvents), so the stream and the CLI's
 * live view cannot drift.
 */
export function publishTopology<K extends Exclude<TopologyEventKind, 'SNAPSHOT'>>(
  ctx: { events: EventHub },
  kind: K,
  data: TopologyEventData<K>,
): void {
  ctx.events.channel(TOPOLOGY_CHANNEL).publish(kind, data);
}
