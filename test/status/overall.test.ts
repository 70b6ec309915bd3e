import { describe, expect, it } from 'vitest';
import { overallOf } from '../../daemon/status/overall.ts';

const r = (id: number, down = false, inMaintenance = false) => ({ id, down, inMaintenance });

/** The banner's rules (docs/DECISIONS.md, Status pages). */
describe('the overall banner', () => {
  it('is operational with nothing down or in maintenance, and for an empty page', () => {
    expect(overallOf([{ resources: [r(1), r(2)] }]).state).toBe('OPERATIONAL');
    expect(overallOf([]).state).toBe('OPERATIONAL');
  });

  it('is degraded when any is down, major when more than half are, or all of a group', () => {
    expect(overallOf([{ resources: [r(1, true), r(2), r(3)] }, { resources: [r(4), r(5)] }]).state).toBe('DEGRADED');
    // Exactly half is not more than half.
    expect(overallOf([{ resources: [r(1, true), r(2, true), r(3), r(4)] }]).state).toBe('DEGRADED');
    expect(overallOf([{ resources: [r(1, true), r(2, true), r(3, true), r(4)] }]).state).toBe('MAJOR_OUTAGE');
    expect(overallOf([{ resources: [r(1), r(2), r(3), r(4)] }, { resources: [r(5, true)] }])).toEqual({ state: 'MAJOR_OUTAGE', label: 'Major outage' });
  });

  it('counts a resource listed in two groups once', () => {
    // 1 is down and shown twice: 1 of 3 resources, not 2 of 4 rows.
    expect(overallOf([{ resources: [r(1, true), r(2)] }, { resources: [r(1, true), r(3)] }]).state).toBe('DEGRADED');
  });

  it('is maintenance when some are in maintenance and none is down outside it', () => {
    expect(overallOf([{ resources: [r(1, false, true), r(2)] }]).state).toBe('MAINTENANCE');
    expect(overallOf([{ resources: [r(1, false, true), r(2, true), r(3)] }]).state).toBe('DEGRADED');
  });
});
