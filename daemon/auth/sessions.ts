import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { LoginMethod, Role } from '../../src/api/schemas/auth.ts';
import type { Database } from '../store/schema.ts';
import { randomToken, sha256 } from './tokens.ts';

export const SESSION_COOKIE = 'JSESSIONID';
const SESSION_TTL_MS = 8 * 60 * 60 * 1000;
/** Sliding expiry is written back at most this often. */
const REFRESH_AFTER_MS = 10 * 60 * 1000;

export interface SessionPrincipal {
  userId: number;
  username: string;
  role: Role;
  csrfToken: string;
  idHash: string;
  /** When the session ends unless it is used again (it slides on use). */
  expiresAt: number;
  /** How it logged in. */
  method: LoginMethod;
}

/**
 * Browser sessions. Before login, the cookie is a random id that is stored
 * nowhere and the CSRF token is derived from it with the install secret, so
 * anonymous visitors of /login cost no rows. Login issues a new id (no session
 * fixation) and stores the same CSRF token with it, so the token read from the
 * login page stays valid for the session.
 */
export class Sessions {
  readonly #db: Kysely<Database>;
  readonly #secret: Uint8Array;

  constructor(db: Kysely<Database>, secret: Uint8Array) {
    this.#db = db;
    this.#secret = secret;
  }

  newId(): string {
    return randomToken('s', 24).slice(2);
  }

  preLoginCsrf(sessionId: string): string {
    return createHmac('sha256', this.#secret).update(`csrf:${sessionId}`).digest('base64url');
  }

  /** A new session of a user who logged in with `method`; its id (the cookie value). */
  async create(userId: number, csrfToken: string, now = Date.now(), method: LoginMethod = 'password'): Promise<string> {
    const id = this.newId();
    await this.#db
      .insertInto('sessions')
      .values({
        id_hash: sha256(id),
        user_id: userId,
        csrf_token: csrfToken,
        created_at: now,
        expires_at: now + SESSION_TTL_MS,
        method,
      })
      .execute();
    // Opportunistic clean-up keeps the table small without a timer.
    await this.#db.deleteFrom('sessions').where('expires_at', '<', now).execute();
    return id;
  }

  async find(sessionId: string, now = Date.now()): Promise<SessionPrincipal | undefined> {
    const idHash = sha256(sessionId);
    const row = await this.#db
      .selectFrom('sessions')
      .innerJoin('users', 'users.id', 'sessions.user_id')
      .select(['sessions.user_id', 'sessions.csrf_token', 'sessions.expires_at', 'sessions.method', 'users.username', 'users.role'])
      .where('sessions.id_hash', '=', idHash)
      .executeTakeFirst();
    if (!row || row.expires_at <= now) return undefined;
    let expiresAt = row.expires_at;
    if (row.expires_at - now < SESSION_TTL_MS - REFRESH_AFTER_MS) {
      expiresAt = now + SESSION_TTL_MS;
      await this.#db.updateTable('sessions').set({ expires_at: expiresAt }).where('id_hash', '=', idHash).execute();
    }
    return {
      userId: row.user_id,
      username: row.username,
      role: row.role as Role,
      csrfToken: row.csrf_token,
      idHash,
      expiresAt,
      method: row.method as LoginMethod,
    };
  }

  /** The role of each session's user now, for the sessions that are still live (open streams are checked against it). */
  async rolesOf(idHashes: readonly string[], now = Date.now()): Promise<Map<string, Role>> {
    const roles = new Map<string, Role>();
    if (idHashes.length === 0) return roles;
    const rows = await this.#db
      .selectFrom('sessions')
      .innerJoin('users', 'users.id', 'sessions.user_id')
      .select(['sessions.id_hash', 'sessions.expires_at', 'users.role'])
      .where('sessions.id_hash', 'in', idHashes)
      .execute();
    for (const row of rows) if (row.expires_at > now) roles.set(row.id_hash, row.role as Role);
    return roles;
  }

  async destroy(idHash: string): Promise<void> {
    await this.#db.deleteFrom('sessions').where('id_hash', '=', idHash).execute();
  }
}

export function tokensEqual(a: string | undefined, b: string | undefined): boolean {
  if (!a || !b) return false;
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
