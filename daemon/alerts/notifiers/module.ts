import type { ModuleFactory } from '../../module.ts';
import { notifierHandlers } from './handlers.ts';
import { closeNotifierPool } from './senders.ts';

/** Notification channels (docs/API.md#notifiers): `/admin/api/notifiers` and the senders the dispatcher uses. */
export const notifiersModule: ModuleFactory = (ctx) => ({
  name: 'notifiers',
  handlers: { ...notifierHandlers },
  async stop() {
    await closeNotifierPool(ctx);
  },
});
