import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MaintenanceCache } from '../../daemon/alerts/maintenance/cache.ts';
import { holdsFor } from '../../daemon/alerts/routing/inhibition.ts';
import { Bus } from '../../daemon/bus.ts';
import { EventHub } from '../../daemon/events/channel.ts';
import { createLogger } from '../../daemon/logger.ts';
import { setLocations } from '../../daemon/probes/resource-locations.ts';
import { recordResults, type ResultWriterDeps } from '../../daemon/probes/results.ts';
import { DAEMON_LOCATION, decide, type Location, type LocationCheck, notChecked, type Quorum } from '../../daemon/probes/locations.ts';
import type { ProbeResult } from '../../daemon/probes/types.ts';
import { openStore, type OpenedStore } from '../../daemon/store/store.ts';

const office: Location = { agentId: 1, name: 'office' };
const lab: Location = { agentId: 2, name: 'lab' };
let t = Date.UTC(2026, 10, 21, 10, 0, 0);
const at = (location: Location, status: ProbeResult['status']): LocationCheck => ({
  location,
  ran: true,
  result: {
    status,
    message: status === 'AVAILABLE' ? '200 OK' : '503 Service Unavailable',
    errorCode: status === 'AVAILABLE' ? null : '503',
    durationMs: 7,
    checkedAt: t,
  },
});
const gone = (location: Location) => notChecked(location, `agent ${location.name} is not connected`, t);

describe('the quorum decides a round', () => {
  const verdict = (quorum: Quorum, ...checks: LocationCheck[]) => decide(quorum, checks).status;

  it('any: down when one location fails, up only when every location is up', () => {
    expect(verdict('any', at(office, 'AVAILABLE'), at(DAEMON_LOCATION, 'NOT_AVAILABLE'))).toBe('NOT_AVAILABLE');
    expect(verdict('any', at(office, 'AVAILABLE'), at(DAEMON_LOCATION, 'AVAILABLE'))).toBe('AVAILABLE');
    expect(verdict('any', at(office, 'AVAILABLE'), gone(lab))).toBe('UNKNOWN');
  });

  it('majority: more than half of the locations', () => {
    const [a, b, c] = [office, lab, DAEMON_LOCATION];
    expect(verdict('majority', at(a, 'AVAILABLE'), at(b, 'AVAILABLE'), at(c, 'NOT_AVAILABLE'))).toBe('AVAILABLE');
    expect(verdict('majority', at(a, 'AVAILABLE'), at(b, 'NOT_AVAILABLE'), at(c, 'NOT_AVAILABLE'))).toBe('NOT_AVAILABLE');
    // One down, one unknown: the unknown could make it a majority, so it is not up either.
    expect(verdict('majority', at(a, 'AVAILABLE'), gone(b), at(c, 'NOT_AVAILABLE'))).toBe('UNKNOWN');
    expect(verdict('majority', at(a, 'AVAILABLE'), gone(b), at(c, 'AVAILABLE'))).toBe('AVAILABLE');
    // Two locations: down needs both.
    expect(verdict('majority', at(a, 'AVAILABLE'), at(c, 'NOT_AVAILABLE'))).toBe('AVAILABLE');
    expect(verdict('majority', gone(a), at(c, 'NOT_AVAILABLE'))).toBe('UNKNOWN');
  });

  it('all: down only when every location fails', () => {
    expect(verdict('all', at(office, 'NOT_AVAILABLE'), at(DAEMON_LOCATION, 'AVAILABLE'))).toBe('AVAILABLE');
    expect(verdict('all', at(office, 'NOT_AVAILABLE'), at(DAEMON_LOCATION, 'NOT_AVAILABLE'))).toBe('NOT_AVAILABLE');
    expect(verdict('all', at(office, 'NOT_AVAILABLE'), gone(lab))).toBe('UNKNOWN');
  });

  it('one location decides alone, its result unchanged; a location that cannot check is never a failure', () => {
    const only = at(office, 'NOT_AVAILABLE');
    expect(decide('majority', [only])).toBe(only.result);
    expect(decide('any', [gone(office)])).toMatchObject({
      status: 'UNKNOWN',
      errorCode: 'LOCATION_UNAVAILABLE',
      message: 'agent office is not connected',
    });
  });
});

/** Rounds through the result writer and the incident engine, on a real SQLite file. */
describe('rounds recorded', () => {
  let dir: string;
  let store: OpenedStore;
  let ctx: ResultWriterDeps;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'monctl-quorum-'));
    store = await openStore(dir);
    const bus = new Bus();
    ctx = {
      db: store.db,
      bus,
      events: new EventHub(),
      maintenance: new MaintenanceCache({ db: store.db, bus, log: createLogger('silent') }),
      config: { incidents: { agentGraceSeconds: 60, certExpiryDays: [14, 7, 1] } },
    };
    const now = Date.now();
    await store.db
      .insertInto('agents')
      .values([
        { id: 1, name: 'office', status: 'CONNECTED', created_at: now },
        { id: 2, name: 'lab', status: 'CONNECTED', created_at: now },
      ])
      .execute();
  });
  afterAll(async () => {
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  let names = 0;
  async function resource(locations: Location[], quorum: Quorum = 'majority'): Promise<number> {
    const now = Date.now();
    const row = await store.db
      .insertInto('resources')
      .values({
        name: `q${++names}`,
        resource_type: 'HTTP',
        target: `http://127.0.0.1/${names}`,
        skip_tls: 0,
        recursive: 0,
        active: 1,
        interval_seconds: 60,
        created_at: now,
        updated_at: now,
        next_run_at: null,
        current_status: 'unknown',
        quorum,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    await setLocations(store.db, row.id, locations);
    return row.id;
  }
  const round = (id: number, quorum: Quorum, ...checks: LocationCheck[]) => {
    t += 60_000;
    const stamped = checks.map((c) => ({ ...c, result: { ...c.result, checkedAt: t } }));
    return recordResults(ctx, [{ resourceId: id, result: decide(quorum, stamped), checks: stamped }]);
  };
  const incidents = (id: number) => store.db.selectFrom('incidents').select('id').where('resource_id', '=', id).execute();
  const row = (id: number) => store.db.selectFrom('resources').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  it('history holds each location that checked; one that could not is unknown in location_results only', async () => {
    const id = await resource([office, DAEMON_LOCATION]);
    const entries = await round(id, 'majority', gone(office), at(DAEMON_LOCATION, 'NOT_AVAILABLE'));
    expect(entries.map((e) => [e.location, e.status])).toEqual([['daemon', 'NOT_AVAILABLE']]);
    const results = await store.db.selectFrom('location_results').selectAll().where('resource_id', '=', id).orderBy('agent_id').execute();
    expect(results.map((r) => [r.agent_id, r.status, r.message])).toEqual([
      [0, 'not_available', '503 Service Unavailable'],
      [1, 'unknown', 'agent office is not connected'],
    ]);
    expect((await row(id)).current_status).toBe('unknown');
  });

  it('a round recorded after a newer one leaves the newer result per location (the writer batches, check-now does not)', async () => {
    const id = await resource([office, DAEMON_LOCATION]);
    t += 120_000;
    const newer = [at(office, 'NOT_AVAILABLE'), at(DAEMON_LOCATION, 'NOT_AVAILABLE')];
    await recordResults(ctx, [{ resourceId: id, result: decide('majority', newer), checks: newer }]);
    const older = [at(office, 'AVAILABLE'), at(DAEMON_LOCATION, 'AVAILABLE')].map((c) => ({
      ...c,
      result: { ...c.result, checkedAt: t - 60_000 },
    }));
    await recordResults(ctx, [{ resourceId: id, result: decide('majority', older), checks: older }]);
    const results = await store.db
      .selectFrom('location_results')
      .select(['agent_id', 'status', 'checked_at'])
      .where('resource_id', '=', id)
      .orderBy('agent_id')
      .execute();
    expect(results).toEqual([
      { agent_id: 0, status: 'not_available', checked_at: t },
      { agent_id: 1, status: 'not_available', checked_at: t },
    ]);
    expect((await row(id)).current_status).toBe('not_available');
  });

  it('incidents follow the decided status: one failing location of three opens nothing, two do', async () => {
    const id = await resource([office, lab, DAEMON_LOCATION]);
    for (let i = 0; i < 4; i++)
      await round(id, 'majority', at(office, 'AVAILABLE'), at(lab, 'AVAILABLE'), at(DAEMON_LOCATION, 'NOT_AVAILABLE'));
    expect(await incidents(id)).toEqual([]);
    expect(await row(id)).toMatchObject({ current_status: 'available', fail_streak: 0 });
    for (let i = 0; i < 3; i++)
      await round(id, 'majority', at(office, 'AVAILABLE'), at(lab, 'NOT_AVAILABLE'), at(DAEMON_LOCATION, 'NOT_AVAILABLE'));
    expect(await incidents(id)).toHaveLength(1);
    expect((await row(id)).current_status).toBe('not_available');
  });

  it('an agent that cannot check never counts as a failure: no incident, whatever the number of rounds', async () => {
    const id = await resource([office]);
    await round(id, 'majority', at(office, 'AVAILABLE'));
    for (let i = 0; i < 5; i++) await round(id, 'majority', gone(office));
    expect(await incidents(id)).toEqual([]);
    // The latest verdict stays as checked; only the status is unknown.
    expect(await row(id)).toMatchObject({
      current_status: 'unknown',
      latest_check_status: 'AVAILABLE',
      latest_message: '200 OK',
      fail_streak: 0,
    });
    expect(
      await store.db
        .selectFrom('check_history')
        .innerJoin('check_outcomes', 'check_outcomes.id', 'outcome_id')
        .select('status')
        .where('resource_id', '=', id)
        .execute(),
    ).toEqual([{ status: 'AVAILABLE' }]);
  });

  it("inhibition: a resource checked from an agent that is down is held back by the agent's own alert", async () => {
    const located = await resource([office, DAEMON_LOCATION], 'any');
    const elsewhere = await resource([lab]);
    const daemonOnly = await resource([DAEMON_LOCATION]);
    await store.db.updateTable('agents').set({ status: 'DISCONNECTED' }).where('id', '=', 1).execute();
    const before = await holdsFor(store.db, [located, elsewhere, daemonOnly]);
    expect([before.get(located), before.get(elsewhere), before.get(daemonOnly)]).toEqual(['defer', undefined, undefined]);
    const { id: incident } = await store.db
      .insertInto('incidents')
      .values({
        subject_type: 'agent',
        agent_id: 1,
        resource_id: null,
        opened_at: t,
        resolved_at: null,
        cause_message: 'disconnected',
        cause_error_code: null,
        checks: 0,
        maintenance: 0,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const after = await holdsFor(store.db, [located, elsewhere, daemonOnly]);
    expect([after.get(located), after.get(elsewhere), after.get(daemonOnly)]).toEqual(['inhibit', undefined, undefined]);
    await store.db.deleteFrom('incidents').where('id', '=', incident).execute();
    await store.db.updateTable('agents').set({ status: 'CONNECTED' }).where('id', '=', 1).execute();
  });
});
