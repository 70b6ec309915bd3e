/**
 * Bounds of the event relay's queues, each direction alike (`--pod-events-max`,
 * `--pod-events-max-bytes`; docs/DECISIONS.md, "Several daemons"): 10,000
 * events is a whole interval of STATUS_CHANGED for 10,000 resources; 8 MiB of
 * their JSON (about 150 bytes each) leaves room for larger topology events.
 */
export interface RelayLimits {
  maxEvents: number;
  maxBytes: number;
}

export const DEFAULT_RELAY_LIMITS: RelayLimits = { maxEvents: 10_000, maxBytes: 8 * 1024 * 1024 };
