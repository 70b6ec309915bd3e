import type { OverallState } from '../../src/api/schemas/status-pages.ts';

export const OVERALL_LABELS: Record<OverallState, string> = {
  OPERATIONAL: 'All systems operational',
  DEGRADED: 'Degraded service: some systems are down',
  MAJOR_OUTAGE: 'Major outage',
  MAINTENANCE: 'Maintenance in progress',
};

/**
 * The banner of a page from what it shows (docs/DECISIONS.md, Status pages):
 * a resource is down when an incident is open for it (the debounced view, not
 * the latest check) and it is not in maintenance now.
 * - major outage: more than half of the shown resources are down, or every
 *   resource of some shown group;
 * - degraded: any is down;
 * - maintenance: none is down and some are in maintenance now;
 * - operational otherwise.
 */
export function overallOf(groups: Array<{ resources: Array<{ id: number; down: boolean; inMaintenance: boolean }> }>): { state: OverallState; label: string } {
  const seen = new Map<number, { down: boolean; inMaintenance: boolean }>();
  let wholeGroupDown = false;
  for (const g of groups) {
    if (g.resources.length > 0 && g.resources.every((r) => r.down)) wholeGroupDown = true;
    for (const r of g.resources) seen.set(r.id, r);
  }
  let down = 0;
  let maintenance = 0;
  for (const r of seen.values()) {
    if (r.down) down++;
    if (r.inMaintenance) maintenance++;
  }
  const state: OverallState = down > 0
    ? (wholeGroupDown || down * 2 > seen.size ? 'MAJOR_OUTAGE' : 'DEGRADED')
    : maintenance > 0 ? 'MAINTENANCE' : 'OPERATIONAL';
  return { state, label: OVERALL_LABELS[state] };
}
