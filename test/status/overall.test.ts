import { describe, expect, it } from 'vitest';
import { overallOf } from '../../daemon/status/overall.ts';

const r = (id: number, down = false, inMaintenance = false, failing = false) => ({
  id,
  down,
  inMaintenance,
  currentStatus: down || failing ? ('not_available' as const) : ('available' as const),
});

/** The banner's rules (README and docs/DECISIONS.md, Status pages): Statuspage's levels. */
describe('the overall banner', () => {
  it('is operational with nothing down or in maintenance, and for an empty page', () => {
    expect(overallOf([{ resources: [r(1), r(2)] }]).state).toBe('OPERATIONAL');
    expect(overallOf([]).state).toBe('OPERATIONAL');
  });

  it('is a partial outage when some but not all are down, a major one when all are', () => {
    expect(overallOf([{ resources: [r(1, true), r(2), r(3)] }, { resources: [r(4), r(5)] }])).toEqual({
      state: 'PARTIAL_OUTAGE',
      label: 'Partial outage',
    });
    // One of three down, alone in its group: not a major outage (the report).
    expect(overallOf([{ resources: [r(1, true)] }, { resources: [r(2)] }, { resources: [r(3)] }]).state).toBe('PARTIAL_OUTAGE');
    expect(overallOf([{ resources: [r(1, true), r(2, true), r(3)] }]).state).toBe('PARTIAL_OUTAGE');
    expect(overallOf([{ resources: [r(1, true), r(2, true), r(3, true)] }])).toEqual({ state: 'MAJOR_OUTAGE', label: 'Major outage' });
  });

  it('is degraded when a latest check failed without an incident yet', () => {
    expect(overallOf([{ resources: [r(1, false, false, true), r(2)] }])).toEqual({ state: 'DEGRADED', label: 'Degraded service' });
    expect(overallOf([{ resources: [r(1, false, false, true), r(2, true), r(3)] }]).state).toBe('PARTIAL_OUTAGE');
  });

  it('counts a resource listed in two groups once', () => {
    // 1 is down and shown twice: 1 of 3 resources, not 2 of 4 rows.
    expect(overallOf([{ resources: [r(1, true), r(2)] }, { resources: [r(1, true), r(3)] }]).state).toBe('PARTIAL_OUTAGE');
  });

  it('is maintenance when some are in maintenance and none is down outside it; a major outage when all others are down', () => {
    expect(overallOf([{ resources: [r(1, false, true), r(2)] }]).state).toBe('MAINTENANCE');
    expect(overallOf([{ resources: [r(1, false, true), r(2, true), r(3)] }]).state).toBe('PARTIAL_OUTAGE');
    expect(overallOf([{ resources: [r(1, false, true), r(2, true), r(3, true)] }]).state).toBe('MAJOR_OUTAGE');
  });
});
