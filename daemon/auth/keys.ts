import type { Kysely } from 'kysely';
import type { Role } from '../../src/api/schemas/auth.ts';
import { conflict, invalidField, notFound } from '../../src/errors.ts';
import { parseDateTime } from '../../src/time.ts';
import type { Handlers } from '../http/bind.ts';
import type { ApiKeyRow, Database } from '../store/schema.ts';
import { adminKeyHolder } from './admin-key-file.ts';
import { toApiKey } from './mappers.ts';

/** The row of a new API key (its name is checked free by the caller); sign it with `ctx.keys.sign`. */
export function insertApiKey(
  db: Kysely<Database>,
  key: {
    name: string;
    role: Role;
    createdBy: string;
    creatorId: number | null;
    routeIds: number[] | null;
    expiresAt: number | null;
    now: number;
  },
): Promise<ApiKeyRow> {
  return db
    .insertInto('api_keys')
    .values({
      name: key.name,
      role: key.role,
      created_by: key.createdBy,
      route_ids: key.routeIds ? JSON.stringify(key.routeIds) : null,
      created_by_user_id: key.creatorId,
      created_at: key.now,
      expires_at: key.expiresAt,
      last_used_at: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Handlers of `/admin/api/api-keys` and `/api/me`. */
export const keyHandlers: Handlers = {
  async me({ ctx, principal }) {
    if (principal.kind !== 'user') throw new Error('unreachable: me needs authentication');
    const user = await ctx.db
      .selectFrom('users')
      .select(['totp_enabled_at', 'sso_subject'])
      .where('username', '=', principal.username)
      .executeTakeFirst();
    return {
      username: principal.username,
      role: principal.role,
      via: principal.via,
      keyId: principal.keyId,
      login: principal.loginMethod ?? null,
      twoFactor: user?.totp_enabled_at != null,
      sso: user?.sso_subject != null,
    };
  },

  async listApiKeys({ ctx }) {
    const rows = await ctx.db.selectFrom('api_keys').selectAll().orderBy('id').execute();
    return rows.map(toApiKey);
  },

  async createApiKey({ ctx, body, principal }) {
    if (principal.kind !== 'user') throw new Error('unreachable: createApiKey needs ADMIN');
    const now = Date.now();
    const expiresAt = body.expiresAt == null ? null : parseDateTime(body.expiresAt)!;
    if (expiresAt !== null && expiresAt <= now) throw invalidField('expiresAt', 'must be in the future');
    const routeIds = body.routeIds && [...new Set(body.routeIds)];
    const row = await ctx.db.transaction().execute(async (trx) => {
      if (routeIds) {
        const found = await trx.selectFrom('routes').select('id').where('id', 'in', routeIds).execute();
        const missing = routeIds.filter((id) => !found.some((r) => Number(r.id) === id));
        if (missing.length) throw invalidField('routeIds', `route ${missing.join(', ')} does not exist`);
      }
      const taken = await trx.selectFrom('api_keys').select('id').where('name', '=', body.name).executeTakeFirst();
      if (taken) throw conflict(`An API key named ${body.name} exists`, 'name');
      const creator = await trx.selectFrom('users').select('id').where('username', '=', principal.username).executeTakeFirst();
      // A route key has no role on the API: it is stored as USER, the least, and refused there anyway.
      return insertApiKey(trx, {
        name: body.name,
        role: routeIds ? 'USER' : (body.role ?? 'ADMIN'),
        createdBy: principal.username,
        creatorId: creator?.id ?? null,
        routeIds: routeIds ?? null,
        expiresAt,
        now,
      });
    });
    return { ...toApiKey(row), token: await ctx.keys.sign(row) };
  },

  async revokeApiKey({ ctx, params }) {
    const holder = await adminKeyHolder(ctx.db, ctx.keys, ctx.config.dataDir);
    if (holder?.keyId === params.id) {
      throw conflict(
        `API key ${params.id} is the one in ${holder.file}, which monctl on the daemon's host uses without a login. ` +
          `To replace it, run "monctl daemon reset-admin --data-dir ${ctx.config.dataDir}" (it revokes this key); to revoke it anyway, delete that file first`,
      );
    }
    const result = await ctx.db.deleteFrom('api_keys').where('id', '=', params.id).executeTakeFirst();
    if (Number(result.numDeletedRows) === 0) throw notFound(`API key ${params.id} does not exist`);
    ctx.keys.forget(params.id);
    ctx.streams.changed();
    return { status: 'deleted' as const };
  },
};
