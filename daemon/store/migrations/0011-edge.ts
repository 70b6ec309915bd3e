import type { Kysely } from 'kysely';
import { ms, withId } from './util.ts';

/**
 * The public edge (docs/DECISIONS.md#the-public-edge-https-certificates-acme-access-control):
 * access control per route, route-scoped API keys, certificates (uploaded or
 * ordered through ACME) and the ACME challenges in flight. Lists are JSON
 * text, read whole.
 */
export async function up(db: Kysely<any>): Promise<void> {
  // none | basic | apiKey
  await db.schema
    .alterTable('routes')
    .addColumn('auth', 'text', (c) => c.notNull().defaultTo('none'))
    .execute();
  // JSON [{ "username", "hash" }] (scrypt hashes, daemon/auth/passwords.ts)
  await db.schema.alterTable('routes').addColumn('basic_users', 'text').execute();
  await db.schema.alterTable('routes').addColumn('ip_allow', 'text').execute();
  await db.schema.alterTable('routes').addColumn('ip_deny', 'text').execute();
  await db.schema.alterTable('routes').addColumn('rate_per_second', 'double precision').execute();
  await db.schema.alterTable('routes').addColumn('rate_burst', 'integer').execute();
  await db.schema
    .alterTable('routes')
    .addColumn('https_redirect', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  // JSON [routeId, …]: a key that opens these routes at the edge (and nothing on the API).
  await db.schema.alterTable('api_keys').addColumn('route_ids', 'text').execute();

  await withId(db, db.schema.createTable('certificates'))
    .addColumn('source', 'text', (c) => c.notNull()) // UPLOAD | ACME
    // ACME: the one name the row orders for (unique: several daemons insert it, one row wins).
    .addColumn('acme_name', 'text', (c) => c.unique())
    .addColumn('hostnames', 'text', (c) => c.notNull())
    .addColumn('cert_pem', 'text')
    .addColumn('key_enc', 'text')
    .addColumn('issuer', 'text')
    .addColumn('serial', 'text')
    .addColumn('not_before', ms)
    .addColumn('not_after', ms)
    .addColumn('challenge', 'text')
    .addColumn('issued_at', ms)
    .addColumn('last_error', 'text')
    .addColumn('last_error_at', ms)
    .addColumn('failures', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', ms)
    .addColumn('claimed_by', 'text')
    .addColumn('claimed_until', ms)
    .addColumn('created_at', ms, (c) => c.notNull())
    .addColumn('updated_at', ms, (c) => c.notNull())
    .execute();

  // HTTP-01 tokens and TLS-ALPN-01 certificates, so that whichever daemon the validator reaches answers.
  await db.schema
    .createTable('acme_challenges')
    .addColumn('token', 'text', (c) => c.primaryKey()) // HTTP-01: the token; TLS-ALPN-01: `alpn:<name>`
    .addColumn('hostname', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('key_authorization', 'text', (c) => c.notNull())
    .addColumn('cert_pem', 'text')
    .addColumn('key_enc', 'text')
    .addColumn('expires_at', ms, (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('acme_challenges').execute();
  await db.schema.dropTable('certificates').execute();
  await db.schema.alterTable('api_keys').dropColumn('route_ids').execute();
  for (const column of ['https_redirect', 'rate_burst', 'rate_per_second', 'ip_deny', 'ip_allow', 'basic_users', 'auth']) {
    await db.schema.alterTable('routes').dropColumn(column).execute();
  }
}
