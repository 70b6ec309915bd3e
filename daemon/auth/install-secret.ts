import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.ts';

/**
 * The per-install secret that signs API-key JWTs and derives CSRF tokens. It
 * lives in the database (not a file) so that several daemon pods on one
 * database share it.
 */
export async function loadInstallSecret(db: Kysely<Database>): Promise<Uint8Array> {
  const existing = await db.selectFrom('settings').select('value').where('key', '=', 'install_secret').executeTakeFirst();
  if (existing) return Buffer.from(existing.value, 'base64');
  const secret = randomBytes(32);
  await db
    .insertInto('settings')
    .values({ key: 'install_secret', value: secret.toString('base64') })
    .onConflict((oc) => oc.column('key').doNothing())
    .execute();
  // Read back: another pod may have won the race.
  const row = await db.selectFrom('settings').select('value').where('key', '=', 'install_secret').executeTakeFirstOrThrow();
  return Buffer.from(row.value, 'base64');
}
