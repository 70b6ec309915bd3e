import type { incidentOperations } from '../../../src/api/ops/incidents.ts';
import { conflict, notFound } from '../../../src/errors.ts';
import type { DaemonContext } from '../../context.ts';
import { uniqueViolation } from '../../store/unique-violation.ts';
import type { HandlersOf } from '../../http/bind.ts';
import type { Database } from '../../store/schema.ts';
import type { Kysely, Transaction } from 'kysely';
import { checkTargets, columns, draftFromCreate, draftFromUpdate, toWindow } from './rules.ts';

type Ops = Pick<
  typeof incidentOperations,
  'listMaintenanceWindows' | 'getMaintenanceWindow' | 'createMaintenanceWindow' | 'updateMaintenanceWindow' | 'deleteMaintenanceWindow'
>;

async function checkNameFree(db: Kysely<Database> | Transaction<Database>, name: string, exceptId?: number): Promise<void> {
  let query = db.selectFrom('maintenance_windows').select('id').where('name', '=', name);
  if (exceptId !== undefined) query = query.where('id', '!=', exceptId);
  if (await query.executeTakeFirst()) throw conflict(`A maintenance window named ${name} exists`, 'name');
}

/** This daemon's cache reads the change at once; other pods within a minute. */
const changed = (ctx: DaemonContext) => ctx.maintenance.reload();

/** Handlers of `/admin/api/maintenance`. */
export const maintenanceHandlers: HandlersOf<Ops> = {
  async listMaintenanceWindows({ ctx }) {
    const now = Date.now();
    return (await ctx.db.selectFrom('maintenance_windows').selectAll().orderBy('id').execute()).map((row) => toWindow(row, now));
  },

  async getMaintenanceWindow({ ctx, params }) {
    const row = await ctx.db.selectFrom('maintenance_windows').selectAll().where('id', '=', params.id).executeTakeFirst();
    if (!row) throw notFound(`Maintenance window ${params.id} does not exist`);
    return toWindow(row);
  },

  async createMaintenanceWindow({ ctx, body }) {
    const draft = draftFromCreate(body);
    const row = await ctx.db
      .transaction()
      .execute(async (trx) => {
        await checkTargets(trx, draft);
        await checkNameFree(trx, draft.name);
        const now = Date.now();
        return trx
          .insertInto('maintenance_windows')
          .values({ ...columns(draft), created_at: now, updated_at: now })
          .returningAll()
          .executeTakeFirstOrThrow();
      })
      .catch((err: unknown) => {
        throw uniqueViolation(err, 'name') ?? err;
      });
    await changed(ctx);
    return toWindow(row);
  },

  async updateMaintenanceWindow({ ctx, params, body }) {
    const row = await ctx.db
      .transaction()
      .execute(async (trx) => {
        const current = await trx.selectFrom('maintenance_windows').selectAll().where('id', '=', params.id).executeTakeFirst();
        if (!current) throw notFound(`Maintenance window ${params.id} does not exist`);
        const draft = draftFromUpdate(current, body);
        await checkTargets(trx, draft);
        if (draft.name !== current.name) await checkNameFree(trx, draft.name, params.id);
        return trx
          .updateTable('maintenance_windows')
          .set({ ...columns(draft), updated_at: Date.now() })
          .where('id', '=', params.id)
          .returningAll()
          .executeTakeFirstOrThrow();
      })
      .catch((err: unknown) => {
        throw uniqueViolation(err, 'name') ?? err;
      });
    await changed(ctx);
    return toWindow(row);
  },

  async deleteMaintenanceWindow({ ctx, params }) {
    const gone = await ctx.db.deleteFrom('maintenance_windows').where('id', '=', params.id).executeTakeFirst();
    if (Number(gone.numDeletedRows) === 0) throw notFound(`Maintenance window ${params.id} does not exist`);
    await changed(ctx);
    return { status: 'deleted' as const };
  },
};
