import { EventEmitter } from 'node:events';

/**
 * In-process notifications between capabilities, e.g. the monitoring API
 * telling the probe scheduler that a resource changed. Not for clients: those
 * get SSE through the event hub.
 */
export interface BusEvents {
  /** A resource was created or changed (target, interval, active, …): reschedule it now. */
  'resource.changed': [{ id: number }];
  /** A resource was deleted: forget it. */
  'resource.deleted': [{ id: number }];
  /** Routes were created, changed or deleted on this daemon (certificates: a new hostname may need one). */
  'routes.changed': [];
  /** Status pages were created, changed or deleted (here or, through the database, on another daemon): a custom hostname may need a certificate. */
  'status-pages.changed': [];
  /** Alert events were committed to the outbox (incidents opened or resolved here): route them now, not at the next tick. */
  'alerts.enqueued': [];
  /** A push check's deadline moved (a ping here or, relayed, at another pod): its judge re-reads `late_at`. */
  'push.pinged': [{ id: number }];
  /** Messages were committed to the subscribers' outbox (daemon/status/subscribers/outbox.ts): fan them out now. */
  'status.subscribers.enqueued': [];
  /** A posted incident or maintenance notice of a page changed (pageId 0: some page, through another pod): its cached views go, its live streams hear of it. */
  'status.posts.changed': [{ pageId: number }];
}

export class Bus extends EventEmitter<BusEvents> {}
