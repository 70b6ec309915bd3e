/** One change `monctl apply` makes: planned by the per-section planners (cli/apply/*-plan.ts), listed and run by cli/commands/apply.ts. */
export interface Step {
  action: 'create' | 'update' | 'delete';
  kind: 'group' | 'resource' | 'announcement' | 'notifier' | 'alert rule' | 'maintenance' | 'status page' | 'agent' | 'route';
  name: string;
  changes?: string[];
  /** An update that only sends secrets again (they cannot be compared): run, but not counted as a change. */
  secretsOnly?: boolean;
  run: () => Promise<void>;
  /**
   * A resource step's item of `POST /admin/api/resources/batch`, built when it runs (group ids
   * made by earlier steps): apply sends consecutive such steps together (cli/apply/run-steps.ts)
   * instead of calling `run`. `done` hears what the daemon did.
   */
  batch?: { item: () => BatchItemBody; done?: (result: { id: number; name: string }) => void };
  /** What the daemon showed once while the step ran (a generated signing secret), for apply to print. */
  shown?: Record<string, string>;
}

/** One item of `POST /admin/api/resources/batch` (docs/API.md#batches). */
export type BatchItemBody =
  | { op: 'create'; resource: Record<string, unknown> }
  | { op: 'update'; id: number; patch: Record<string, unknown> }
  | { op: 'delete'; id: number };
