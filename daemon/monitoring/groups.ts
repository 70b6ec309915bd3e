import type { monitoringAdminOperations } from '../../src/api/ops/monitoring-admin.ts';
import { conflict, notFound } from '../../src/errors.ts';
import { toGroup } from './mappers.ts';
import { uniqueViolation } from '../store/unique-violation.ts';
import type { HandlersOf } from '../http/bind.ts';
import type { MonitoringState } from './state.ts';

type Ops = Pick<typeof monitoringAdminOperations, 'listGroups' | 'getGroup' | 'createGroup' | 'updateGroup' | 'deleteGroup'>;

/**
 * Handlers of `/admin/api/groups`. Names are unique. A group that still has
 * resources cannot be deleted: its resources would silently change visibility
 * (a HIDDEN group's members would become public).
 */
export function groupHandlers(state: MonitoringState): HandlersOf<Ops> {
  return {
    async listGroups({ ctx }) {
      return (await ctx.db.selectFrom('groups').selectAll().orderBy('id').execute()).map(toGroup);
    },

    async getGroup({ ctx, params }) {
      const row = await ctx.db.selectFrom('groups').selectAll().where('id', '=', params.id).executeTakeFirst();
      if (!row) throw notFound(`Group ${params.id} does not exist`);
      return toGroup(row);
    },

    async createGroup({ ctx, body }) {
      const now = Date.now();
      const row = await ctx.db
        .transaction()
        .execute(async (trx) => {
          if (await trx.selectFrom('groups').select('id').where('name', '=', body.name).executeTakeFirst()) {
            throw conflict(`A group named ${body.name} exists`, 'name');
          }
          return trx
            .insertInto('groups')
            .values({ name: body.name, visibility: body.visibility, created_at: now, updated_at: now })
            .returningAll()
            .executeTakeFirstOrThrow();
        })
        .catch((err: unknown) => {
          throw uniqueViolation(err, 'name') ?? err;
        });
      return toGroup(row);
    },

    async updateGroup({ ctx, params, body }) {
      const row = await ctx.db
        .transaction()
        .execute(async (trx) => {
          const group = await trx.selectFrom('groups').select('id').where('id', '=', params.id).executeTakeFirst();
          if (!group) throw notFound(`Group ${params.id} does not exist`);
          const taken = await trx
            .selectFrom('groups')
            .select('id')
            .where('name', '=', body.name)
            .where('id', '!=', params.id)
            .executeTakeFirst();
          if (taken) throw conflict(`A group named ${body.name} exists`, 'name');
          return trx
            .updateTable('groups')
            .set({ name: body.name, visibility: body.visibility, updated_at: Date.now() })
            .where('id', '=', params.id)
            .returningAll()
            .executeTakeFirstOrThrow();
        })
        .catch((err: unknown) => {
          throw uniqueViolation(err, 'name') ?? err;
        });
      await state.visibility.reload();
      return toGroup(row);
    },

    async deleteGroup({ ctx, params }) {
      await ctx.db.transaction().execute(async (trx) => {
        const group = await trx.selectFrom('groups').select('id').where('id', '=', params.id).executeTakeFirst();
        if (!group) throw notFound(`Group ${params.id} does not exist`);
        const members = await trx
          .selectFrom('resource_groups')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('group_id', '=', params.id)
          .executeTakeFirstOrThrow();
        if (Number(members.n) > 0) {
          throw conflict(`Group ${params.id} still has ${members.n} resource(s); move them out of it first`);
        }
        await trx.deleteFrom('groups').where('id', '=', params.id).execute();
      });
      return { status: 'deleted' as const };
    },
  };
}
