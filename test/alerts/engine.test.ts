import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AgentIncidentSweep, type SweepDeps } from '../../daemon/alerts/agents/agent-incidents.ts';
import { stopWatching } from '../../daemon/alerts/incidents/lifecycle.ts';
import { MaintenanceCache, maintenanceFor } from '../../daemon/alerts/maintenance/cache.ts';
import { Bus } from '../../daemon/bus.ts';
import { EventHub, type HubEvent } from '../../daemon/events/channel.ts';
import { createLogger } from '../../daemon/logger.ts';
import { recordResults, type ResultWriterDeps } from '../../daemon/probes/results.ts';
import type { ProbeResult } from '../../daemon/probes/types.ts';
import type { OpenedStore } from '../../daemon/store/store.ts';
import { openTestStore } from '../helpers/test-database.ts';

/** The incident engine inside the result writer, against a real database (SQLite, or PostgreSQL in that project). */
describe('incident engine', () => {
  let dir: string;
  let store: OpenedStore;
  let ctx: ResultWriterDeps & SweepDeps;
  const events: HubEvent[] = [];
  let t = Date.UTC(2026, 10, 21, 10, 0, 0);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'monctl-engine-'));
    store = await openTestStore(dir);
    const hub = new EventHub();
    hub.channel('monitoring').listen((e) => events.push(e));
    const base = { db: store.db, bus: new Bus(), log: createLogger('silent') };
    ctx = {
      ...base,
      events: hub,
      maintenance: new MaintenanceCache(base),
      config: { incidents: { agentGraceSeconds: 60, certExpiryDays: [14, 7, 1] } },
    };
  });
  afterAll(async () => {
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    events.length = 0;
  });

  let names = 0;
  async function resource(over: { failure_threshold?: number; success_threshold?: number } = {}): Promise<number> {
    const now = Date.now();
    const row = await store.db
      .insertInto('resources')
      .values({
        name: `r${++names}`,
        resource_type: 'HTTP',
        target: `https://127.0.0.1/${names}`,
        skip_tls: 0,
        recursive: 0,
        active: 1,
        interval_seconds: 60,
        created_at: now,
        updated_at: now,
        next_run_at: null,
        current_status: 'unknown',
        latest_check_status: null,
        latest_checked_at: null,
        latest_message: null,
        latest_error_code: null,
        latest_duration_ms: null,
        ...over,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }
  const result = (status: ProbeResult['status'], code: string | null = null, extra: Partial<ProbeResult> = {}): ProbeResult => ({
    status,
    message: status === 'AVAILABLE' ? '200 OK' : `fail ${code}`,
    errorCode: code,
    durationMs: 5,
    checkedAt: (t += 1000),
    ...extra,
  });
  const check = (id: number, ...results: ProbeResult[]) =>
    recordResults(
      ctx,
      results.map((result) => ({ resourceId: id, result })),
    );
  const incidents = (id: number) => store.db.selectFrom('incidents').selectAll().where('resource_id', '=', id).orderBy('id').execute();
  const outbox = (id: number) => store.db.selectFrom('alert_events').selectAll().where('resource_id', '=', id).orderBy('id').execute();
  const streaks = (id: number) =>
    store.db
      .selectFrom('resources')
      .select(['fail_streak', 'ok_streak', 'open_incident_id'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();

  it('a target flapping up and down with threshold 3 opens nothing', async () => {
    const id = await resource();
    for (const s of ['AVAILABLE', 'NOT_AVAILABLE', 'AVAILABLE', 'NOT_AVAILABLE', 'NOT_AVAILABLE', 'AVAILABLE', 'NOT_AVAILABLE'] as const) {
      await check(id, result(s, s === 'AVAILABLE' ? null : '503'));
    }
    expect(await incidents(id)).toEqual([]);
    expect(await outbox(id)).toEqual([]);
    expect(await streaks(id)).toEqual({ fail_streak: 1, ok_streak: 0, open_incident_id: null });
  });

  it('three failures open one incident with the first failure as cause, recovery resolves it, each with one outbox row', async () => {
    const id = await resource();
    await check(id, result('AVAILABLE'));
    const first = result('NOT_AVAILABLE', '500');
    await check(id, first);
    await check(id, result('NOT_AVAILABLE', '502'));
    expect(await incidents(id)).toEqual([]);
    await check(id, result('NOT_AVAILABLE', '503'));
    const [incident] = await incidents(id);
    expect(incident).toMatchObject({
      subject_type: 'resource',
      opened_at: first.checkedAt,
      resolved_at: null,
      cause_message: 'fail 500',
      cause_error_code: '500',
      checks: 3,
      maintenance: 0,
    });
    expect((await streaks(id)).open_incident_id).toBe(incident.id);
    let rows = await outbox(id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ kind: 'INCIDENT_OPENED', incident_id: incident.id, suppressed: null, routed_at: null });
    expect(JSON.parse(rows[0].payload)).toMatchObject({
      kind: 'INCIDENT_OPENED',
      subject: { type: 'resource', id, name: expect.any(String), target: expect.stringContaining('https://') },
      incidentId: incident.id,
      openedAt: first.checkedAt,
      resolvedAt: null,
      cause: { message: 'fail 500', errorCode: '500' },
      cert: null,
    });
    expect(events.filter((e) => e.kind === 'INCIDENT_OPENED').map((e) => e.data)).toEqual([
      expect.objectContaining({
        id: incident.id,
        resourceId: id,
        agentId: null,
        resolvedAt: null,
        checks: 3,
        maintenance: false,
        cause: { message: 'fail 500', errorCode: '500' },
      }),
    ]);

    await check(id, result('NOT_AVAILABLE', '503'), result('UNKNOWN', 'X'));
    await check(id, result('NOT_AVAILABLE', '503'));
    expect((await incidents(id))[0].checks).toBe(5);
    const back = result('AVAILABLE');
    await check(id, back);
    const [done] = await incidents(id);
    expect(done).toMatchObject({ resolved_at: back.checkedAt, checks: 5 });
    rows = await outbox(id);
    expect(rows.map((r) => [r.kind, r.suppressed])).toEqual([
      ['INCIDENT_OPENED', null],
      ['INCIDENT_RESOLVED', null],
    ]);
    expect(JSON.parse(rows[1].payload)).toMatchObject({ openedAt: first.checkedAt, resolvedAt: back.checkedAt });
    expect(events.filter((e) => e.kind === 'INCIDENT_RESOLVED')).toHaveLength(1);
    expect(await streaks(id)).toEqual({ fail_streak: 0, ok_streak: 1, open_incident_id: null });
  });

  it('UNKNOWN results neither open nor resolve', async () => {
    const id = await resource({ failure_threshold: 2 });
    await check(id, result('NOT_AVAILABLE', '500'), result('UNKNOWN', 'DOCKER_ERROR'), result('UNKNOWN', 'DOCKER_ERROR'));
    expect(await incidents(id)).toEqual([]);
    await check(id, result('NOT_AVAILABLE', '500'));
    expect(await incidents(id)).toHaveLength(1);
    await check(id, result('UNKNOWN', 'DOCKER_ERROR'), result('UNKNOWN', 'DOCKER_ERROR'));
    expect((await incidents(id))[0].resolved_at).toBeNull();
  });

  it('a result older than the latest only adds history', async () => {
    const id = await resource({ failure_threshold: 1 });
    await check(id, result('AVAILABLE'));
    await recordResults(ctx, [{ resourceId: id, result: { ...result('NOT_AVAILABLE', '500'), checkedAt: t - 60_000 } }]);
    expect(await incidents(id)).toEqual([]);
  });

  it('incidents opened in a maintenance window are marked and both their events suppressed; others are not', async () => {
    const inside = await resource({ failure_threshold: 1 });
    const outside = await resource({ failure_threshold: 1 });
    const group = await store.db
      .insertInto('groups')
      .values({ name: 'maint-group', visibility: 'PUBLIC', created_at: 0, updated_at: 0 })
      .returning('id')
      .executeTakeFirstOrThrow();
    await store.db.insertInto('resource_groups').values({ resource_id: inside, group_id: group.id }).execute();
    await store.db
      .insertInto('maintenance_windows')
      .values({
        name: 'now',
        kind: 'ONE_OFF',
        starts_at: t - 1000,
        ends_at: t + 3_600_000,
        days: null,
        start_time: null,
        duration_minutes: null,
        time_zone: null,
        resource_ids: '[]',
        group_ids: JSON.stringify([group.id]),
        agent_ids: '[]',
        created_at: 0,
        updated_at: 0,
      })
      .execute();
    await ctx.maintenance.reload();
    await recordResults(
      ctx,
      [inside, outside].map((resourceId) => ({ resourceId, result: result('NOT_AVAILABLE', '500') })),
    );
    expect((await incidents(inside))[0].maintenance).toBe(1);
    expect((await incidents(outside))[0].maintenance).toBe(0);
    await recordResults(
      ctx,
      [inside, outside].map((resourceId) => ({ resourceId, result: result('AVAILABLE') })),
    );
    expect((await outbox(inside)).map((r) => [r.kind, r.suppressed])).toEqual([
      ['INCIDENT_OPENED', 'maintenance'],
      ['INCIDENT_RESOLVED', 'maintenance'],
    ]);
    expect((await outbox(outside)).map((r) => [r.kind, r.suppressed])).toEqual([
      ['INCIDENT_OPENED', null],
      ['INCIDENT_RESOLVED', null],
    ]);
    await store.db.deleteFrom('maintenance_windows').execute();
    await ctx.maintenance.reload();
  });

  it('deleting or deactivating a resource resolves its open incident, suppressed', async () => {
    const id = await resource({ failure_threshold: 1 });
    await check(id, result('NOT_AVAILABLE', '500'));
    await store.db.transaction().execute((trx) => stopWatching(trx, id, 'deactivated'));
    expect((await incidents(id))[0].resolved_at).not.toBeNull();
    expect((await outbox(id)).map((r) => [r.kind, r.suppressed])).toEqual([
      ['INCIDENT_OPENED', null],
      ['INCIDENT_RESOLVED', 'deactivated'],
    ]);
    expect(await streaks(id)).toEqual({ fail_streak: 0, ok_streak: 0, open_incident_id: null });
  });

  it('CERT_EXPIRING fires once for the smallest threshold crossed, and again only for a smaller one', async () => {
    const id = await resource();
    const notAfter = t + 3 * 86_400_000;
    await check(id, result('AVAILABLE', null, { certNotAfter: notAfter }));
    await check(id, result('AVAILABLE', null, { certNotAfter: notAfter }));
    let rows = await outbox(id);
    expect(rows.map((r) => r.kind)).toEqual(['CERT_EXPIRING']);
    expect(JSON.parse(rows[0].payload)).toMatchObject({ kind: 'CERT_EXPIRING', cert: { notAfter, thresholdDays: 7 }, incidentId: null });
    expect(
      await store.db.selectFrom('resources').select(['cert_expires_at', 'cert_alerted_days']).where('id', '=', id).executeTakeFirst(),
    ).toEqual({ cert_expires_at: notAfter, cert_alerted_days: 7 });
    t += 2.5 * 86_400_000;
    await check(id, result('AVAILABLE', null, { certNotAfter: notAfter }));
    rows = await outbox(id);
    expect(rows.map((r) => JSON.parse(r.payload).cert.thresholdDays)).toEqual([7, 1]);
  });

  it('a batch over many resources opens one incident each', async () => {
    const ids: number[] = [];
    for (let i = 0; i < 150; i++) ids.push(await resource({ failure_threshold: 2 }));
    for (let round = 0; round < 3; round++) {
      await recordResults(
        ctx,
        ids.map((resourceId) => ({ resourceId, result: result('NOT_AVAILABLE', '500') })),
      );
    }
    const rows = await store.db.selectFrom('incidents').select(['resource_id', 'checks']).where('resource_id', 'in', ids).execute();
    expect(rows).toHaveLength(150);
    expect(new Set(rows.map((r) => r.checks))).toEqual(new Set([3]));
    const opened = await store.db.selectFrom('alert_events').select('resource_id').where('resource_id', 'in', ids).execute();
    expect(opened).toHaveLength(150);
  });
  it('two sweeps racing over one database open one agent incident (the conditional update decides)', async () => {
    const agent = await store.db
      .insertInto('agents')
      .values({ name: 'racer', status: 'DISCONNECTED', created_at: 0, last_seen_at: Date.now() - 120_000 })
      .returning('id')
      .executeTakeFirstOrThrow();
    const sweeps = [new AgentIncidentSweep(ctx), new AgentIncidentSweep(ctx)];
    await Promise.all(sweeps.map((s) => s.sweep()));
    await Promise.all(sweeps.map((s) => s.sweep()));
    const rows = await store.db.selectFrom('incidents').select(['id']).where('agent_id', '=', agent.id).execute();
    expect(rows).toHaveLength(1);
    const agentEvents = await store.db
      .selectFrom('alert_events')
      .select(['kind', 'incident_id'])
      .where('agent_id', '=', agent.id)
      .execute();
    expect(agentEvents).toEqual([{ kind: 'AGENT_DOWN', incident_id: rows[0].id }]);
    expect(
      (await store.db.selectFrom('agents').select('open_incident_id').where('id', '=', agent.id).executeTakeFirstOrThrow())
        .open_incident_id,
    ).toBe(rows[0].id);
  });
  it('maintenanceFor (the status page) finds windows open now or upcoming by resource or group', async () => {
    const member = await resource();
    const loner = await resource();
    const group = await store.db
      .insertInto('groups')
      .values({ name: 'status-page', visibility: 'PUBLIC', created_at: 0, updated_at: 0 })
      .returning('id')
      .executeTakeFirstOrThrow();
    await store.db.insertInto('resource_groups').values({ resource_id: member, group_id: group.id }).execute();
    const now = Date.UTC(2026, 0, 5, 12, 0); // a Monday
    const row = (name: string, over: object) => ({
      name,
      kind: 'ONE_OFF' as const,
      starts_at: null,
      ends_at: null,
      days: null,
      start_time: null,
      duration_minutes: null,
      time_zone: null,
      resource_ids: '[]',
      group_ids: '[]',
      agent_ids: '[]',
      created_at: 0,
      updated_at: 0,
      ...over,
    });
    await store.db
      .insertInto('maintenance_windows')
      .values([
        row('open-now', { starts_at: now - 1000, ends_at: now + 1000, group_ids: JSON.stringify([group.id]) }),
        row('tuesdays', {
          kind: 'WEEKLY',
          days: '["TUE"]',
          start_time: '01:00',
          duration_minutes: 60,
          time_zone: 'UTC',
          resource_ids: JSON.stringify([member]),
        }),
        row('far-away', { starts_at: now + 30 * 86_400_000, ends_at: now + 31 * 86_400_000, resource_ids: JSON.stringify([member]) }),
      ])
      .execute();
    await ctx.maintenance.reload();
    const names = async (targets: { resourceIds?: number[]; groupIds?: number[] }) =>
      (await maintenanceFor(ctx.maintenance, targets, now)).map((m) => [m.window.name, m.active, m.occurrence.start]);
    expect(await names({ groupIds: [group.id] })).toEqual([['open-now', true, now - 1000]]);
    expect(await names({ resourceIds: [member] })).toEqual([
      ['open-now', true, now - 1000],
      ['tuesdays', false, Date.UTC(2026, 0, 6, 1, 0)],
    ]);
    expect(await names({ resourceIds: [loner] })).toEqual([]);
    await store.db.deleteFrom('maintenance_windows').execute();
    await ctx.maintenance.reload();
  });
});
