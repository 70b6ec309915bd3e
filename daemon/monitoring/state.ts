import type { CorsList } from './cors.ts';
import type { ReadCache } from './read-cache.ts';
import type { VisibilityCache } from './visibility.ts';

/** What the monitoring handlers share: in-memory caches kept in step with the database. */
export interface MonitoringState {
  visibility: VisibilityCache;
  cors: CorsList;
  /** Rendered hot reads, dropped when what they show changes. */
  reads: ReadCache;
}
