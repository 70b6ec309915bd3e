import type { CurrentStatus } from '../../src/api/schemas/monitoring.ts';
import type { OverallState } from '../../src/api/schemas/status-pages.ts';

export const OVERALL_LABELS: Record<OverallState, string> = {
  OPERATIONAL: 'All systems operational',
  DEGRADED: 'Degraded service',
  PARTIAL_OUTAGE: 'Partial outage',
  MAJOR_OUTAGE: 'Major outage',
  MAINTENANCE: 'Maintenance in progress',
};

/** What the banner needs of a shown resource. */
export interface BannerInput {
  id: number;
  down: boolean;
  inMaintenance: boolean;
  currentStatus?: CurrentStatus;
}

/**
 * The banner of a page from what it shows (README and docs/DECISIONS.md,
 * Status pages), with the levels of Atlassian Statuspage and Uptime Kuma.
 * A resource is down when an incident is open for it (the debounced view, not
 * the latest check) and it is not in maintenance now; a resource listed in two
 * groups counts once.
 * - major outage: every shown resource outside maintenance is down (nothing
 *   the page lists works);
 * - partial outage: some, not all, are down;
 * - degraded: none is down, but some latest check failed without an incident
 *   yet (below the resource's failure threshold: failing, not confirmed);
 * - maintenance: none of the above, and some are in maintenance now;
 * - operational otherwise.
 */
export function overallOf(groups: Array<{ resources: BannerInput[] }>): { state: OverallState; label: string } {
  const seen = new Map<number, BannerInput>();
  for (const g of groups) for (const r of g.resources) seen.set(r.id, r);
  let down = 0,
    failing = 0,
    maintenance = 0;
  for (const r of seen.values()) {
    if (r.inMaintenance) maintenance++;
    else if (r.down) down++;
    else if (r.currentStatus === 'not_available') failing++;
  }
  const state: OverallState =
    down > 0
      ? down === seen.size - maintenance
        ? 'MAJOR_OUTAGE'
        : 'PARTIAL_OUTAGE'
      : failing > 0
        ? 'DEGRADED'
        : maintenance > 0
          ? 'MAINTENANCE'
          : 'OPERATIONAL';
  return { state, label: OVERALL_LABELS[state] };
}
