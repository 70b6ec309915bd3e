import type { ModuleFactory } from '../../module.ts';
import { notifierHandlers } from './handlers.ts';

/** Notification channels (docs/API.md#notifiers): `/admin/api/notifiers` and the senders the dispatcher uses. */
export const notifiersModule: ModuleFactory = () => ({
  name: 'notifiers',
  handlers: { ...notifierHandlers },
});
