import type { OperationDef } from '../../src/api/operation.ts';
import type { Handler } from '../http/bind.ts';
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

/** Handlers for one table of operations, typed by that table (before it joins src/api/operations.ts). */
export type HandlersOf<T extends Record<string, OperationDef>> = { [K in keyof T]: Handler<T[K]> };
