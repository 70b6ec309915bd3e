import { conflict, notFound } from '../../src/errors.ts';
import type { Handlers } from '../http/bind.ts';
import { adminKeyHolder } from './admin-key-file.ts';
import { toUser } from './mappers.ts';
import { hashPassword } from './passwords.ts';

/** Handlers of `/admin/api/users`. The last ADMIN can be neither deleted nor demoted. */
export const userHandlers: Handlers = {
  async listUsers({ ctx }) {
    const rows = await ctx.db.selectFrom('users').selectAll().orderBy('id').execute();
    return rows.map(toUser);
  },

  async createUser({ ctx, body }) {
    const passwordHash = await hashPassword(body.password);
    const now = Date.now();
    const row = await ctx.db.transaction().execute(async (trx) => {
      const taken = await trx.selectFrom('users').select('id').where('username', '=', body.username).executeTakeFirst();
      if (taken) throw conflict(`Username ${body.username} is taken`, 'username');
      return trx
        .insertInto('users')
        .values({
          username: body.username,
          password_hash: passwordHash,
          role: body.role,
          created_at: now,
          updated_at: now,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
    });
    return toUser(row);
  },

  async updateUser({ ctx, params, body }) {
    const passwordHash = body.password === undefined ? undefined : await hashPassword(body.password);
    const row = await ctx.db.transaction().execute(async (trx) => {
      const user = await trx.selectFrom('users').selectAll().where('id', '=', params.id).executeTakeFirst();
      if (!user) throw notFound(`User ${params.id} does not exist`);
      if (user.role === 'ADMIN' && body.role === 'USER') {
        const admins = await trx
          .selectFrom('users')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('role', '=', 'ADMIN')
          .executeTakeFirstOrThrow();
        if (Number(admins.n) <= 1) throw conflict('Cannot demote the last ADMIN', 'role');
      }
      const updated = await trx
        .updateTable('users')
        .set({ role: body.role ?? user.role, password_hash: passwordHash ?? user.password_hash, updated_at: Date.now() })
        .where('id', '=', params.id)
        .returningAll()
        .executeTakeFirstOrThrow();
      // A new password ends the user's sessions everywhere.
      if (passwordHash) await trx.deleteFrom('sessions').where('user_id', '=', params.id).execute();
      return updated;
    });
    ctx.streams.changed();
    return toUser(row);
  },

  async deleteUser({ ctx, params }) {
    const holder = await adminKeyHolder(ctx.db, ctx.keys, ctx.config.dataDir);
    if (holder && holder.userId === params.id) {
      // Deleting the user would revoke the key (foreign keys cascade) and leave the host's CLI locked out.
      throw conflict(
        `User ${params.id} owns API key ${holder.keyId}, the one in ${holder.file}, which monctl on the daemon's host uses ` +
          'without a login; deleting the user would revoke that key. Delete that file first if this is intended',
      );
    }
    await ctx.db.transaction().execute(async (trx) => {
      const user = await trx.selectFrom('users').select(['id', 'role']).where('id', '=', params.id).executeTakeFirst();
      if (!user) throw notFound(`User ${params.id} does not exist`);
      if (user.role === 'ADMIN') {
        const admins = await trx
          .selectFrom('users')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('role', '=', 'ADMIN')
          .executeTakeFirstOrThrow();
        if (Number(admins.n) <= 1) throw conflict('Cannot delete the last ADMIN');
      }
      // Sessions and the API keys this user created go with it (foreign keys cascade).
      await trx.deleteFrom('users').where('id', '=', params.id).execute();
    });
    ctx.streams.changed();
    return { status: 'deleted' as const };
  },
};
