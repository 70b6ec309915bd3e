import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Bus } from '../../daemon/bus.ts';
import { createPushResource } from '../../daemon/push/create-resource.ts';
import { findPingKey } from '../../daemon/push/store/ping-keys.ts';
import type { OpenedStore } from '../../daemon/store/store.ts';
import { systemClock } from '../../daemon/util/clock.ts';
import { HttpError } from '../../src/errors.ts';
import { dropDatabaseFor, openTestStore } from '../helpers/test-database.ts';

/**
 * What the ping endpoints call for `?create=1` and `/ping/{key}/{slug}` (daemon/push/), against a
 * real database (SQLite, or PostgreSQL in that project): the HTTP side is the pings' own tests.
 */
describe('createPushResource and findPingKey', () => {
  let dir: string;
  let store: OpenedStore;
  let ctx: Parameters<typeof createPushResource>[0];
  const changed: number[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'monctl-push-create-'));
    store = await openTestStore(dir);
    const bus = new Bus();
    bus.on('resource.changed', ({ id }) => changed.push(id));
    ctx = { db: store.db, bus, clock: systemClock, installSecret: new Uint8Array(32).fill(3) };
  });

  afterAll(async () => {
    await store?.close();
    await dropDatabaseFor(dir);
    rmSync(dir, { recursive: true, force: true });
  });

  /** The status and field of the HttpError `run` throws. */
  async function failure(run: Promise<unknown>): Promise<[number, string | undefined]> {
    const err = await run.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(HttpError);
    const http = err as HttpError;
    return [http.status, http.errors?.[0]?.field];
  }

  it('creates a PUSH resource named after the slug, with the default schedule, and says so on the bus', async () => {
    const before = Date.now();
    const { resourceId, uuid } = await createPushResource(ctx, { slug: 'nightly-db', groupId: null });
    const row = await store.db.selectFrom('resources').selectAll().where('id', '=', resourceId).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ name: 'nightly-db', resource_type: 'PUSH', target: 'nightly-db', active: 1, next_run_at: null });
    const push = await store.db.selectFrom('push_checks').selectAll().where('resource_id', '=', resourceId).executeTakeFirstOrThrow();
    expect(push).toMatchObject({ uuid, slug: 'nightly-db', period_seconds: 86400, cron: null, grace_seconds: 3600 });
    expect(push.late_at).toBeGreaterThanOrEqual(before + 90_000_000);
    expect(changed).toContain(resourceId);
  });

  it("takes the key's group, finds a free name, and refuses a taken or bad slug and an unknown group", async () => {
    const now = Date.now();
    const group = await store.db
      .insertInto('groups')
      .values({ name: 'jobs', visibility: 'PUBLIC', created_at: now, updated_at: now })
      .returning('id')
      .executeTakeFirstOrThrow();
    // A resource of another type already has the name: the new one is `backup-2`.
    await createPushResource(ctx, { slug: 'named-first', groupId: null });
    await store.db.updateTable('resources').set({ name: 'backup' }).where('name', '=', 'named-first').execute();
    const { resourceId } = await createPushResource(ctx, { slug: 'backup', groupId: group.id });
    const row = await store.db.selectFrom('resources').select(['name', 'target']).where('id', '=', resourceId).executeTakeFirstOrThrow();
    expect(row).toEqual({ name: 'backup-2', target: 'backup' });
    const groups = await store.db.selectFrom('resource_groups').select('group_id').where('resource_id', '=', resourceId).execute();
    expect(groups).toEqual([{ group_id: group.id }]);

    expect(await failure(createPushResource(ctx, { slug: 'backup', groupId: null }))).toEqual([409, 'target']);
    expect(await failure(createPushResource(ctx, { slug: '../x', groupId: null }))).toEqual([400, 'target']);
    expect(await failure(createPushResource(ctx, { slug: 'orphan', groupId: 987654 }))).toEqual([400, 'groupIds']);
  });

  it('findPingKey: the key, its group and allowCreate; undefined for an unknown key; one daemon key at most', async () => {
    const row = await store.db
      .insertInto('ping_keys')
      .values({ key: 'k'.repeat(32), group_id: null, allow_create: 1, created_at: Date.now() })
      .returning('id')
      .executeTakeFirstOrThrow();
    expect(await findPingKey(store.db, 'k'.repeat(32))).toEqual({ id: row.id, groupId: null, allowCreate: true });
    expect(await findPingKey(store.db, 'x'.repeat(32))).toBeUndefined();
    // One daemon key: NULL group ids never clash in a unique index, so migration 0021 adds a partial one.
    const second = store.db
      .insertInto('ping_keys')
      .values({ key: 'y'.repeat(32), group_id: null, allow_create: 0, created_at: Date.now() })
      .execute();
    await expect(second).rejects.toThrow(/UNIQUE|duplicate key/i);
  });
});
