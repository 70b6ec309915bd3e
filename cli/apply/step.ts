/** What every step has: what it does to which object. */
interface StepBase {
  action: 'create' | 'update' | 'delete';
  kind: 'group' | 'resource' | 'announcement' | 'notifier' | 'alert rule' | 'maintenance' | 'status page' | 'agent' | 'route';
  name: string;
  changes?: string[];
  /** An update that only sends secrets again (they cannot be compared): run, but not counted as a change. */
  secretsOnly?: boolean;
  /** What the daemon showed once while the step ran (a generated signing secret), for apply to print. */
  shown?: Record<string, string>;
}

/**
 * One change `monctl apply` makes: planned by the per-section planners (cli/apply/*-plan.ts),
 * listed and run by cli/commands/apply.ts. A resource step is an item of
 * `POST /admin/api/resources/batch`, built when it runs (group ids made by earlier steps): apply
 * sends consecutive such steps together (cli/apply/run-steps.ts), and `done` hears what the
 * daemon did. Every other step is its own call, `run`.
 */
export type Step = StepBase &
  (
    | { run: () => Promise<void>; batch?: undefined }
    | { batch: { item: () => BatchItemBody; done?: (result: { id: number; name: string }) => void }; run?: undefined }
  );

/** One item of `POST /admin/api/resources/batch` (docs/API.md#batches). */
export type BatchItemBody =
  | { op: 'create'; resource: Record<string, unknown> }
  | { op: 'update'; id: number; patch: Record<string, unknown> }
  | { op: 'delete'; id: number };
