import { randomBytes } from 'node:crypto';
import type { Static } from '@sinclair/typebox';
import type { pingKeyOperations } from '../../src/api/ops/ping-keys.ts';
import type { PingKey } from '../../src/api/schemas/push.ts';
import { invalidField, notFound } from '../../src/errors.ts';
import { formatDateTime } from '../../src/time.ts';
import type { DaemonContext } from '../context.ts';
import type { HandlersOf } from '../http/bind.ts';
import { uniqueViolation } from '../store/unique-violation.ts';

type Ops = typeof pingKeyOperations;

/** A new key: 24 random bytes, 32 URL-safe characters (192 bits: as hard to guess as a ping URL's uuid, and more). */
const newKey = () => randomBytes(24).toString('base64url');

/**
 * `/admin/api/ping-keys` (docs/API.md#push-checks): at most one key for the daemon and one per
 * group; creating a scope's key replaces the one it had (same id, a new key).
 */
export const pingKeyHandlers: HandlersOf<Ops> = {
  listPingKeys: ({ ctx }) => readKeys(ctx),

  async createPingKey({ ctx, body }) {
    const groupId = body.groupId ?? null;
    const values = { key: newKey(), allow_create: body.allowCreate ? 1 : 0, created_at: Date.now() };
    const id = await ctx.db
      .transaction()
      .execute(async (trx) => {
        if (groupId !== null && !(await trx.selectFrom('groups').select('id').where('id', '=', groupId).executeTakeFirst())) {
          throw invalidField('groupId', `no group with id ${groupId}`);
        }
        const scope = trx.selectFrom('ping_keys').select('id');
        const old = await (groupId === null
          ? scope.where('group_id', 'is', null)
          : scope.where('group_id', '=', groupId)
        ).executeTakeFirst();
        if (old) {
          await trx.updateTable('ping_keys').set(values).where('id', '=', old.id).execute();
          return old.id;
        }
        const row = await trx
          .insertInto('ping_keys')
          .values({ ...values, group_id: groupId })
          .returning('id')
          .executeTakeFirstOrThrow();
        return row.id;
      })
      // Another pod created this scope's key at the same moment (one key per scope is a unique index).
      .catch((err: unknown) => {
        throw uniqueViolation(err, 'groupId') ?? err;
      });
    return (await readKeys(ctx, id))[0];
  },

  async deletePingKey({ ctx, params }) {
    const deleted = await ctx.db.deleteFrom('ping_keys').where('id', '=', params.id).executeTakeFirst();
    if (Number(deleted.numDeletedRows) === 0) throw notFound(`Ping key ${params.id} does not exist`);
    return { status: 'deleted' as const };
  },
};

/** Every key (the daemon's first, then by group id), or the one with `id`. */
async function readKeys(ctx: Pick<DaemonContext, 'db'>, id?: number): Promise<Array<Static<typeof PingKey>>> {
  let query = ctx.db
    .selectFrom('ping_keys')
    .leftJoin('groups', 'groups.id', 'ping_keys.group_id')
    .select(['ping_keys.id', 'ping_keys.key', 'ping_keys.group_id', 'groups.name', 'ping_keys.allow_create', 'ping_keys.created_at']);
  if (id !== undefined) query = query.where('ping_keys.id', '=', id);
  const rows = await query.orderBy('ping_keys.id').execute();
  return rows
    .map((r) => ({
      id: r.id,
      key: r.key,
      groupId: r.group_id,
      groupName: r.name,
      allowCreate: r.allow_create === 1,
      createdAt: formatDateTime(r.created_at),
    }))
    .sort((a, b) => (a.groupId ?? 0) - (b.groupId ?? 0));
}
