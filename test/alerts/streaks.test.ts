import { describe, expect, it } from 'vitest';
import { certStep } from '../../daemon/alerts/incidents/cert-expiry.ts';
import { OPENED_HERE, type StreakState, walkStreaks } from '../../daemon/alerts/incidents/streaks.ts';

const fresh: StreakState = { failStreak: 0, okStreak: 0, failSince: null, failMessage: null, failErrorCode: null, openIncidentId: null };
const up = (t: number) => ({ status: 'AVAILABLE' as const, message: '200 OK', errorCode: null, checkedAt: t });
const down = (t: number, code = '503') => ({ status: 'NOT_AVAILABLE' as const, message: `${code} down`, errorCode: code, checkedAt: t });
const unknown = (t: number) => ({ status: 'UNKNOWN' as const, message: 'rate limited', errorCode: 'DOCKER_ERROR', checkedAt: t });
const th = { failure: 3, success: 1 };

describe('walkStreaks', () => {
  it('a flapping target never reaches a threshold of 3', () => {
    const w = walkStreaks(fresh, th, [down(1), up(2), down(3), down(4), up(5), down(6)]);
    expect(w.steps).toEqual([]);
    expect(w.state).toMatchObject({ failStreak: 1, okStreak: 0, failSince: 6, openIncidentId: null });
  });

  it('three failures open one incident dated and caused by the first; recovery resolves it', () => {
    const w = walkStreaks(fresh, th, [down(1, '500'), down(2, '502'), down(3, '503'), down(4)]);
    expect(w.steps).toEqual([{ kind: 'open', at: 3, openedAt: 1, cause: { message: '500 down', errorCode: '500' }, checks: 4 }]);
    expect(w.state.openIncidentId).toBe(OPENED_HERE);
    const open = { ...w.state, openIncidentId: 42 };
    const more = walkStreaks(open, th, [down(5), down(6)]);
    expect(more.steps).toEqual([]);
    expect(more.extraChecks).toBe(2);
    const back = walkStreaks(more.state, th, [down(7), up(8)]);
    expect(back.steps).toEqual([{ kind: 'resolve', incidentId: 42, at: 8, checks: 1 }]);
    expect(back.state).toMatchObject({ openIncidentId: null, okStreak: 1, failStreak: 0, failSince: null });
    expect(back.extraChecks).toBe(0);
  });

  it('a streak that started in an earlier batch keeps its first failure as the cause', () => {
    const first = walkStreaks(fresh, th, [up(1), down(2, '500')]);
    const second = walkStreaks(first.state, th, [down(3), down(4)]);
    expect(second.steps).toEqual([{ kind: 'open', at: 4, openedAt: 2, cause: { message: '500 down', errorCode: '500' }, checks: 3 }]);
  });

  it('UNKNOWN neither opens, resolves, breaks nor extends a streak', () => {
    const w = walkStreaks(fresh, th, [down(1), unknown(2), down(3), unknown(4), unknown(5)]);
    expect(w.steps).toEqual([]);
    expect(w.state.failStreak).toBe(2);
    const opened = walkStreaks(w.state, th, [down(6)]);
    expect(opened.steps).toMatchObject([{ kind: 'open', openedAt: 1 }]);
    const held = walkStreaks({ ...opened.state, openIncidentId: 7 }, th, [unknown(7), unknown(8)]);
    expect(held.steps).toEqual([]);
    expect(held.state.openIncidentId).toBe(7);
  });

  it('success threshold 2: one AVAILABLE between failures does not resolve', () => {
    const open = { ...fresh, failStreak: 5, openIncidentId: 9 };
    const w = walkStreaks(open, { failure: 3, success: 2 }, [up(1), down(2), up(3), up(4)]);
    expect(w.steps).toEqual([{ kind: 'resolve', incidentId: 9, at: 4, checks: 1 }]);
  });

  it('opens and resolves within one batch, then opens again', () => {
    const w = walkStreaks(fresh, { failure: 1, success: 1 }, [down(1), up(2), down(3)]);
    expect(w.steps.map((s) => s.kind)).toEqual(['open', 'resolve', 'open']);
    expect(w.steps[1]).toMatchObject({ incidentId: OPENED_HERE, checks: 0 });
    expect(w.state.openIncidentId).toBe(OPENED_HERE);
  });
});

describe('certStep', () => {
  const day = 86_400_000;
  const t0 = Date.UTC(2026, 0, 1);
  const th = [14, 7, 1];

  it('fires once for the smallest threshold crossed, then not again for the same certificate', () => {
    const first = certStep({ expiresAt: null, alertedDays: null }, t0 + 3 * day, t0, th);
    expect(first).toEqual({ state: { expiresAt: t0 + 3 * day, alertedDays: 7 }, fire: 7 });
    expect(certStep(first.state, t0 + 3 * day, t0 + 1000, th).fire).toBeUndefined();
    const later = certStep(first.state, t0 + 3 * day, t0 + 2.5 * day, th);
    expect(later.fire).toBe(1);
    expect(certStep(later.state, t0 + 3 * day, t0 + 2.9 * day, th).fire).toBeUndefined();
  });

  it('is silent far from expiry and starts again when the certificate is renewed', () => {
    expect(certStep({ expiresAt: null, alertedDays: null }, t0 + 90 * day, t0, th)).toEqual({
      state: { expiresAt: t0 + 90 * day, alertedDays: null },
      fire: undefined,
    });
    const renewed = certStep({ expiresAt: t0 + day, alertedDays: 1 }, t0 + 10 * day, t0, th);
    expect(renewed).toEqual({ state: { expiresAt: t0 + 10 * day, alertedDays: 14 }, fire: 14 });
  });
});
