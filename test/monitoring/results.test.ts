import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_AGENT_GRACE_SECONDS, DEFAULT_CERT_EXPIRY_DAYS } from '../../daemon/config/incident-defaults.ts';
import { MaintenanceCache } from '../../daemon/alerts/maintenance/cache.ts';
import { Bus } from '../../daemon/bus.ts';
import { EventHub, type HubEvent } from '../../daemon/events/channel.ts';
import { createLogger, type Logger } from '../../daemon/logger.ts';
import { getRegistryCredential, registryBox } from '../../daemon/probes/registry-credentials-store.ts';
import { recordResults, type ResultWriterDeps } from '../../daemon/probes/results.ts';
import type { ProbeResult } from '../../daemon/probes/types.ts';
import type { OpenedStore } from '../../daemon/store/store.ts';
import { openTestStore } from '../helpers/test-database.ts';

/** The result writer and the registry-credential store against a real database (SQLite, or PostgreSQL in that project). */
describe('recordResults', () => {
  let dir: string;
  let store: OpenedStore;
  let ctx: ResultWriterDeps & { log: Logger; installSecret: Uint8Array };
  const events: HubEvent[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'monctl-results-'));
    store = await openTestStore(dir);
    const hub = new EventHub();
    hub.channel('monitoring').listen((e) => events.push(e));
    const base = { db: store.db, bus: new Bus(), log: createLogger('silent') };
    ctx = {
      ...base,
      events: hub,
      installSecret: new Uint8Array(32).fill(7),
      maintenance: new MaintenanceCache(base),
      config: { incidents: { agentGraceSeconds: DEFAULT_AGENT_GRACE_SECONDS, certExpiryDays: [...DEFAULT_CERT_EXPIRY_DAYS] } },
    };
    const now = Date.now();
    for (const [name, active] of [
      ['a', 1],
      ['b', 1],
      ['off', 0],
    ] as const) {
      await store.db
        .insertInto('resources')
        .values({
          name,
          resource_type: 'HTTP',
          target: 'http://127.0.0.1/',
          skip_tls: 0,
          recursive: 0,
          active,
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
        })
        .execute();
    }
  });
  afterAll(async () => {
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const result = (status: ProbeResult['status'], checkedAt: number, errorCode: string | null = null): ProbeResult => ({
    status,
    message: status === 'AVAILABLE' ? '200 OK' : 'broken',
    errorCode,
    durationMs: 12.6,
    checkedAt,
  });

  it('writes a batch in order, maps UNKNOWN to NOT_AVAILABLE in history and unknown in currentStatus, skips deleted ids', async () => {
    events.length = 0;
    const t = Date.UTC(2026, 10, 21, 10, 0, 0);
    const entries = await recordResults(ctx, [
      { resourceId: 1, result: result('AVAILABLE', t, 'ignored') },
      { resourceId: 999, result: result('AVAILABLE', t) },
      { resourceId: 2, result: result('UNKNOWN', t, 'DOCKER_ERROR') },
      { resourceId: 1, result: result('NOT_AVAILABLE', t + 1000, '503') },
    ]);
    expect(entries.map((e) => [e.status, e.errorCode, e.checkedAt, e.durationMs])).toEqual([
      ['AVAILABLE', null, '2026-11-21T10:00:00', 13],
      ['NOT_AVAILABLE', 'DOCKER_ERROR', '2026-11-21T10:00:00', 13],
      ['NOT_AVAILABLE', '503', '2026-11-21T10:00:01', 13],
    ]);
    expect(entries[0].id).toBeLessThan(entries[2].id);
    const rows = await store.db.selectFrom('resources').selectAll().orderBy('id').execute();
    expect(rows.map((r) => [r.current_status, r.latest_check_status, r.latest_error_code])).toEqual([
      ['not_available', 'NOT_AVAILABLE', '503'],
      ['unknown', 'NOT_AVAILABLE', 'DOCKER_ERROR'],
      ['unknown', null, null],
    ]);
    const history = await store.db.selectFrom('check_history').select(['id', 'resource_id']).orderBy('id').execute();
    expect(history.map((h) => h.resource_id)).toEqual([1, 2, 1]);
    expect(events.filter((e) => e.kind === 'CHECK_COMPLETED').map((e) => e.data)).toEqual(
      entries.map((e, i) => ({
        resourceId: [1, 2, 1][i],
        historyId: e.id,
        status: e.status,
        message: e.message,
        errorCode: e.errorCode,
        durationMs: e.durationMs,
        checkedAt: e.checkedAt,
        location: 'daemon',
      })),
    );
    // Resource 2 stays unknown: no STATUS_CHANGED for it; resource 1 moved unknown -> not_available.
    expect(events.filter((e) => e.kind === 'STATUS_CHANGED').map((e) => e.data)).toEqual([
      { resourceId: 1, name: 'a', from: 'unknown', to: 'not_available', at: '2026-11-21T10:00:01' },
    ]);
  });

  it('keeps the newest result when an older one arrives late, and is silent about inactive resources', async () => {
    events.length = 0;
    const t = Date.UTC(2026, 10, 21, 9, 0, 0);
    await recordResults(ctx, [
      { resourceId: 1, result: result('AVAILABLE', t) },
      { resourceId: 3, result: result('AVAILABLE', t) },
    ]);
    const rows = await store.db.selectFrom('resources').select(['id', 'current_status']).orderBy('id').execute();
    expect(rows[0].current_status).toBe('not_available');
    expect(rows[2].current_status).toBe('available');
    expect(events.map((e) => e.kind)).toEqual(['CHECK_COMPLETED', 'CHECK_COMPLETED']);
    expect(await recordResults(ctx, [])).toEqual([]);
  });

  it('records a large batch cut into statement-sized chunks: every result once, ids matched to their resource', async () => {
    events.length = 0;
    const now = Date.now();
    const ids: number[] = [];
    for (let i = 0; i < 300; i++) {
      const row = await store.db
        .insertInto('resources')
        .values({
          name: `bulk-${i}`,
          resource_type: 'HTTP',
          target: 'http://127.0.0.1/',
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
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      ids.push(row.id);
    }
    // 337 results (256 + 64 + 16 + 1 rows): resources 0..36 twice, the second time NOT_AVAILABLE with a later time.
    const t = Date.UTC(2026, 10, 21, 11, 0, 0);
    const items = [
      ...ids.map((id, i) => ({ resourceId: id, result: { ...result('AVAILABLE', t), durationMs: i } })),
      ...ids
        .slice(0, 37)
        .map((id, i) => ({ resourceId: id, result: { ...result('NOT_AVAILABLE', t + 1000, '500'), durationMs: 1000 + i } })),
    ];
    const entries = await recordResults(ctx, items);
    expect(entries).toHaveLength(337);
    expect(new Set(entries.map((e) => e.id)).size).toBe(337);
    const history = new Map(
      (
        await store.db.selectFrom('check_history').select(['id', 'resource_id', 'duration_ms']).where('resource_id', '>=', ids[0]).execute()
      ).map((h) => [h.id, h]),
    );
    expect(history.size).toBe(337);
    entries.forEach((e, i) => {
      expect(history.get(e.id)).toMatchObject({ resource_id: items[i].resourceId, duration_ms: items[i].result.durationMs });
      expect(e.durationMs).toBe(items[i].result.durationMs);
    });
    const latest = await store.db
      .selectFrom('resources')
      .select(['id', 'current_status', 'latest_duration_ms'])
      .where('id', '>=', ids[0])
      .orderBy('id')
      .execute();
    expect(latest.map((r) => [r.current_status, r.latest_duration_ms])).toEqual(
      ids.map((_, i) => (i < 37 ? ['not_available', 1000 + i] : ['available', i])),
    );
    expect(events.filter((e) => e.kind === 'CHECK_COMPLETED')).toHaveLength(337);
  });

  it('seals registry passwords and opens them for the probe only', async () => {
    const sealed = registryBox(ctx).seal('s3cret');
    expect(sealed).not.toContain('s3cret');
    await store.db
      .insertInto('registry_credentials')
      .values({ registry: 'docker.io', username: 'me', password_enc: sealed, created_at: 1 })
      .execute();
    expect(await getRegistryCredential(ctx, 'registry-1.docker.io')).toEqual({ username: 'me', password: 's3cret' });
    expect(await getRegistryCredential(ctx, 'ghcr.io')).toBeUndefined();
    const other = { ...ctx, installSecret: new Uint8Array(32).fill(8) };
    expect(await getRegistryCredential(other, 'docker.io')).toBeUndefined();
  });
});
