import type { Kysely } from 'kysely';
import { ms, withId } from './util.ts';

/**
 * Sign-in beyond passwords (docs/API.md#single-sign-on, #two-factor-login, #route-sign-in):
 * - `users.sso_issuer`, `sso_subject`: the provider account a user is linked to (unique together);
 *   a user created by SSO has an empty `password_hash`, which no password matches.
 * - `users.totp_secret` (sealed, SecretBox `totp-secrets`), `totp_enabled_at` (NULL: not enrolled, or
 *   enrolment not confirmed), `totp_last_step` (the last accepted 30 s step: a code is never taken twice),
 *   `totp_failures`, `totp_failed_at` (the throttle, shared by every pod).
 * - `users.last_login_method`: password, password+totp or sso (shown by `monctl users`).
 * - `user_recovery_codes`: ten one-time codes per enrolment, sha256-hashed; `used_at` once used.
 * - `sessions.method`: how the session logged in (`/api/me`).
 * - `sso_handoffs`: one-time codes that hand an SSO login to `monctl login --sso` (loopback), hashed.
 * - `routes.sso_rules`: JSON `{emails, domains, groups, sessionTtl}` of a route with `auth: oidc`.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const users = db.schema.alterTable('users');
  await users.addColumn('sso_issuer', 'text').execute();
  await users.addColumn('sso_subject', 'text').execute();
  await users.addColumn('totp_secret', 'text').execute();
  await users.addColumn('totp_enabled_at', ms).execute();
  await users.addColumn('totp_last_step', ms).execute();
  await users.addColumn('totp_failures', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await users.addColumn('totp_failed_at', ms).execute();
  await users.addColumn('last_login_method', 'text').execute();
  await db.schema.createIndex('users_sso').on('users').columns(['sso_issuer', 'sso_subject']).unique().execute();
  await withId(db, db.schema.createTable('user_recovery_codes'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('code_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', ms, (c) => c.notNull())
    .addColumn('used_at', ms)
    .execute();
  await db.schema.createIndex('user_recovery_codes_user').on('user_recovery_codes').column('user_id').execute();
  await db.schema
    .alterTable('sessions')
    .addColumn('method', 'text', (c) => c.notNull().defaultTo('password'))
    .execute();
  await db.schema
    .createTable('sso_handoffs')
    .addColumn('code_hash', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', ms, (c) => c.notNull())
    .addColumn('expires_at', ms, (c) => c.notNull())
    .execute();
  await db.schema.alterTable('routes').addColumn('sso_rules', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('routes').dropColumn('sso_rules').execute();
  await db.schema.dropTable('sso_handoffs').execute();
  await db.schema.alterTable('sessions').dropColumn('method').execute();
  await db.schema.dropTable('user_recovery_codes').execute();
  await db.schema.dropIndex('users_sso').execute();
  for (const column of [
    'last_login_method',
    'totp_failed_at',
    'totp_failures',
    'totp_last_step',
    'totp_enabled_at',
    'totp_secret',
    'sso_subject',
    'sso_issuer',
  ]) {
    await db.schema.alterTable('users').dropColumn(column).execute();
  }
}
