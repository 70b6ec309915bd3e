import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import type { Kysely } from 'kysely';
import type { Role } from '../../src/api/schemas/auth.ts';
import type { ApiKeyRow, Database } from '../store/schema.ts';

/**
 * API keys are HS256 JWTs signed with the install secret. The JWT only says
 * which key it is (`jti`); whether the key still exists, its role and its
 * expiry are read from the table on every request, so revocation is immediate.
 */
const ISSUER = 'monctl';
/** lastUsedAt is written at most this often per key, to keep reads read-only. */
const LAST_USED_GRANULARITY_MS = 60_000;

export interface KeyPrincipal {
  keyId: number;
  role: Role;
  username: string;
  /** Milliseconds since the epoch; null for a key that never expires. */
  expiresAt: number | null;
}

/** The columns a key's standing is read from (its row joined with its creator's role). */
interface StandingRow {
  role: string;
  expires_at: number | null;
  route_ids: string | null;
  creator_role: string | null;
}

/**
 * The role a key grants now, or undefined when it grants nothing on the API:
 * expired, or a route key (those open their routes at the edge only). A key
 * never grants more than its creator has now: demoting a user demotes their keys.
 */
function standingRole(row: StandingRow, now: number): Role | undefined {
  if (row.expires_at != null && row.expires_at <= now) return undefined;
  if (row.route_ids !== null) return undefined;
  return row.creator_role === 'USER' ? 'USER' : (row.role as Role);
}

export class ApiKeys {
  readonly #db: Kysely<Database>;
  readonly #secret: Uint8Array;
  readonly #lastUsedWritten = new Map<number, number>();

  constructor(db: Kysely<Database>, secret: Uint8Array) {
    this.#db = db;
    this.#secret = secret;
  }

  async sign(row: Pick<ApiKeyRow, 'id' | 'role' | 'created_by' | 'created_at' | 'expires_at'>): Promise<string> {
    const jwt = new SignJWT({ role: row.role })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuer(ISSUER)
      .setSubject(row.created_by)
      .setJti(String(row.id))
      .setIssuedAt(Math.floor(row.created_at / 1000));
    // Rounded up: the table's expiry (checked on every request) decides, never a JWT truncated to seconds.
    if (row.expires_at != null) jwt.setExpirationTime(Math.ceil(row.expires_at / 1000));
    return jwt.sign(this.#secret);
  }

  /** The key id a token names if its signature is ours; whether the key still exists is not looked up. */
  async idOf(token: string): Promise<number | undefined> {
    let jti: string | undefined;
    try {
      const { payload } = await jwtVerify(token, this.#secret, { issuer: ISSUER, algorithms: ['HS256'] });
      jti = payload.jti;
    } catch (err) {
      if (err instanceof joseErrors.JOSEError || err instanceof TypeError) return undefined;
      throw err;
    }
    return jti && /^\d{1,15}$/.test(jti) ? Number(jti) : undefined;
  }

  /** The key's principal, or undefined for a bad signature, unknown, revoked or expired key. */
  async verify(token: string, now = Date.now()): Promise<KeyPrincipal | undefined> {
    const id = await this.idOf(token);
    if (id === undefined) return undefined;
    const row = await this.#standing().where('api_keys.id', '=', id).executeTakeFirst();
    const role = row && standingRole(row, now);
    if (!row || !role) return undefined;
    this.#touch(id, now);
    return { keyId: id, role, username: row.created_by, expiresAt: row.expires_at };
  }

  /** The role each key grants now, for the keys that still grant one (open streams are checked against it). */
  async rolesOf(ids: readonly number[], now = Date.now()): Promise<Map<number, Role>> {
    const roles = new Map<number, Role>();
    if (ids.length === 0) return roles;
    for (const row of await this.#standing().where('api_keys.id', 'in', ids).execute()) {
      const role = standingRole(row, now);
      if (role) roles.set(Number(row.id), role);
    }
    return roles;
  }

  #standing() {
    return this.#db
      .selectFrom('api_keys')
      .leftJoin('users', 'users.id', 'api_keys.created_by_user_id')
      .select([
        'api_keys.id',
        'api_keys.role',
        'api_keys.created_by',
        'api_keys.expires_at',
        'api_keys.route_ids',
        'users.role as creator_role',
      ]);
  }

  /**
   * A route key presented at the edge: 'ok' when it is valid and scoped to the route,
   * 'other-route' when it is valid for other routes only, undefined when it is no key of ours.
   */
  async verifyForRoute(token: string, routeId: number, now = Date.now()): Promise<'ok' | 'other-route' | undefined> {
    const id = await this.idOf(token);
    if (id === undefined) return undefined;
    const row = await this.#db.selectFrom('api_keys').select(['expires_at', 'route_ids']).where('id', '=', id).executeTakeFirst();
    if (!row || row.route_ids === null || (row.expires_at != null && row.expires_at <= now)) return undefined;
    this.#touch(id, now);
    return (JSON.parse(row.route_ids) as number[]).includes(routeId) ? 'ok' : 'other-route';
  }

  #touch(id: number, now: number) {
    const last = this.#lastUsedWritten.get(id) ?? 0;
    if (now - last < LAST_USED_GRANULARITY_MS) return;
    this.#lastUsedWritten.set(id, now);
    // Fire and forget: a failed timestamp must not fail the request.
    this.#db
      .updateTable('api_keys')
      .set({ last_used_at: now })
      .where('id', '=', id)
      .execute()
      .catch(() => {});
  }

  forget(id: number) {
    this.#lastUsedWritten.delete(id);
  }
}
