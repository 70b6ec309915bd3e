import type { DaemonContext } from '../context.ts';
import type { DaemonModule } from '../module.ts';
import { pingKeyHandlers } from './ping-keys.ts';

/**
 * The push capability (docs/API.md#push-checks): the ping endpoints on the API and edge
 * listeners, and the deadline judge that marks a silent check MISSED_PING. Resources of type
 * PUSH are created and edited through the monitoring API like any other; the probe scheduler
 * leaves them alone.
 */
export function pushModule(_ctx: DaemonContext): DaemonModule {
  return { name: 'push', handlers: { ...pingKeyHandlers } };
}
