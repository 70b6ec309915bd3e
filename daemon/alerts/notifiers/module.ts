import type { ModuleFactory } from '../../module.ts';
import { notifierHandlers } from './handlers.ts';

/** Notification channels (issue 15): `/admin/api/notifiers` and the senders the dispatcher uses. */
export const notifiersModule: ModuleFactory = () => ({
  name: 'notifiers',
  handlers: { ...notifierHandlers },
});
