import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Bus } from '../../daemon/bus.ts';
import { createPushResource } from '../../daemon/push/create-resource.ts';
import { writeUpdates } from '../../daemon/push/ping-store.ts';
import type { OpenedStore } from '../../daemon/store/store.ts';
import { systemClock } from '../../daemon/util/clock.ts';
import { dropDatabaseFor, openTestStore } from '../helpers/test-database.ts';

/** The ping writer's deadline updates, many checks per statement, against a real database (both backends). */
describe('writeUpdates', () => {
  let dir: string;
  let store: OpenedStore;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'monctl-ping-store-'));
    store = await openTestStore(dir);
  });
  afterAll(async () => {
    await store?.close();
    await dropDatabaseFor(dir);
    rmSync(dir, { recursive: true, force: true });
  });

  it('moves only what each ping moved, for checks of one batch in one statement', async () => {
    const ctx = { db: store.db, bus: new Bus(), clock: systemClock, installSecret: new Uint8Array(32).fill(5) };
    const ids: number[] = [];
    for (let i = 0; i < 70; i++) ids.push((await createPushResource(ctx, { slug: `batch-${i}`, groupId: null })).resourceId);
    const [started, finished] = ids;
    await writeUpdates(store.db, [{ resourceId: started, lastPingAt: 1_000, lastPingKind: 'success', startedAt: null, lateAt: 5_000 }]);
    // One batch: a start (which keeps the last finish), a finish, and 68 more finishes (two statements).
    await writeUpdates(store.db, [
      { resourceId: started, startedAt: 2_000, lateAt: 3_000 },
      ...ids
        .slice(1)
        .map((id, i) => ({ resourceId: id, lastPingAt: 10_000 + i, lastPingKind: 'fail', startedAt: null, lateAt: 20_000 + i })),
    ]);
    const rows = await store.db
      .selectFrom('push_checks')
      .select(['resource_id', 'last_ping_at', 'last_ping_kind', 'started_at', 'late_at'])
      .where('resource_id', 'in', [started, finished, ids[69]])
      .orderBy('resource_id')
      .execute();
    const plain = rows.map((r) => ({
      ...r,
      last_ping_at: r.last_ping_at === null ? null : Number(r.last_ping_at),
      started_at: r.started_at === null ? null : Number(r.started_at),
      late_at: r.late_at === null ? null : Number(r.late_at),
    }));
    expect(plain).toEqual([
      { resource_id: started, last_ping_at: 1_000, last_ping_kind: 'success', started_at: 2_000, late_at: 3_000 },
      { resource_id: finished, last_ping_at: 10_000, last_ping_kind: 'fail', started_at: null, late_at: 20_000 },
      { resource_id: ids[69], last_ping_at: 10_068, last_ping_kind: 'fail', started_at: null, late_at: 20_068 },
    ]);
  });
});
