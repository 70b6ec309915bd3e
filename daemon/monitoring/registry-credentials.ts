import type { Selectable } from 'kysely';
import type { monitoringAdminOperations } from '../../src/api/ops/monitoring-admin.ts';
import { conflict, invalidField, notFound } from '../../src/errors.ts';
import { formatDateTime } from '../../src/time.ts';
import type { RegistryCredentialsTable } from '../store/schema.ts';
import { normaliseRegistry, registryBox } from '../probes/registry-credentials-store.ts';
import { uniqueViolation } from '../store/unique-violation.ts';
import type { HandlersOf } from '../http/bind.ts';
import { checkHostPort } from './targets.ts';

type Ops = Pick<typeof monitoringAdminOperations, 'listRegistryCredentials' | 'createRegistryCredential' | 'deleteRegistryCredential'>;

function toCredential(row: Pick<Selectable<RegistryCredentialsTable>, 'id' | 'registry' | 'username' | 'created_at'>) {
  return { id: row.id, registry: row.registry, username: row.username, createdAt: formatDateTime(row.created_at) };
}

/** Handlers of `/admin/api/registry-credentials`: one credential per registry, passwords sealed and never returned. */
export const registryCredentialHandlers: HandlersOf<Ops> = {
  async listRegistryCredentials({ ctx }) {
    const rows = await ctx.db
      .selectFrom('registry_credentials')
      .select(['id', 'registry', 'username', 'created_at'])
      .orderBy('id')
      .execute();
    return rows.map(toCredential);
  },

  async createRegistryCredential({ ctx, body }) {
    const registry = normaliseRegistry(body.registry);
    const reason = checkHostPort(registry, false);
    if (reason) throw invalidField('registry', `must be host[:port] of a registry: ${reason}`);
    const sealed = registryBox(ctx).seal(body.password);
    const row = await ctx.db
      .transaction()
      .execute(async (trx) => {
        if (await trx.selectFrom('registry_credentials').select('id').where('registry', '=', registry).executeTakeFirst()) {
          throw conflict(`A credential for ${registry} exists; delete it first`, 'registry');
        }
        return trx
          .insertInto('registry_credentials')
          .values({
            registry,
            username: body.username,
            password_enc: sealed,
            created_at: Date.now(),
          })
          .returning(['id', 'registry', 'username', 'created_at'])
          .executeTakeFirstOrThrow();
      })
      .catch((err: unknown) => {
        throw uniqueViolation(err, 'registry') ?? err;
      });
    return toCredential(row);
  },

  async deleteRegistryCredential({ ctx, params }) {
    const result = await ctx.db.deleteFrom('registry_credentials').where('id', '=', params.id).executeTakeFirst();
    if (Number(result.numDeletedRows) === 0) throw notFound(`Registry credential ${params.id} does not exist`);
    return { status: 'deleted' as const };
  },
};
