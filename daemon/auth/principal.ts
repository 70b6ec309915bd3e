import type { IncomingMessage } from 'node:http';
import type { LoginMethod, Role } from '../../src/api/schemas/auth.ts';
import { unauthorized } from '../../src/errors.ts';
import { readCookie } from '../http/cookies.ts';
import type { ApiKeys } from './api-keys.ts';
import { SESSION_COOKIE, type Sessions } from './sessions.ts';

export type Principal =
  | { kind: 'anonymous' }
  | {
      kind: 'user';
      username: string;
      role: Role;
      via: 'api-key' | 'session';
      keyId: number | null;
      /** Set for sessions: unsafe calls must echo it (CSRF). */
      csrfToken: string | null;
      sessionHash: string | null;
      /** When the credential stops being valid by itself (key expiry, session timeout); null: never. Open streams end then. */
      expiresAt?: number | null;
      /** Sessions: how they logged in (password, password+totp, sso); null for API keys. */
      loginMethod?: LoginMethod | null;
    };

export const ANONYMOUS: Principal = { kind: 'anonymous' };

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** The API key the request presents, from `X-API-KEY` or `Authorization: Bearer|ApiKey`. */
export function presentedKey(req: IncomingMessage): string | undefined {
  const xApiKey = header(req, 'x-api-key');
  if (xApiKey !== undefined) return xApiKey.trim();
  const authorization = header(req, 'authorization');
  if (authorization === undefined) return undefined;
  const match = /^(Bearer|ApiKey)\s+(\S+)\s*$/i.exec(authorization);
  return match ? match[2] : '';
}

/**
 * Who is calling. A presented API key must be valid (401 otherwise, even on
 * public endpoints, so a script with a revoked key fails loudly); a stale
 * session cookie is merely anonymous, as browsers keep cookies around.
 */
export async function resolvePrincipal(req: IncomingMessage, keys: ApiKeys, sessions: Sessions): Promise<Principal> {
  const key = presentedKey(req);
  if (key !== undefined) {
    const found = key === '' ? undefined : await keys.verify(key);
    if (!found) throw unauthorized('Invalid, expired or revoked API key');
    return {
      kind: 'user',
      username: found.username,
      role: found.role,
      via: 'api-key',
      keyId: found.keyId,
      csrfToken: null,
      sessionHash: null,
      expiresAt: found.expiresAt,
    };
  }
  const sessionId = readCookie(req, SESSION_COOKIE);
  if (sessionId) {
    const session = await sessions.find(sessionId);
    if (session) {
      return {
        kind: 'user',
        username: session.username,
        role: session.role,
        via: 'session',
        keyId: null,
        csrfToken: session.csrfToken,
        sessionHash: session.idHash,
        expiresAt: session.expiresAt,
        loginMethod: session.method,
      };
    }
  }
  return ANONYMOUS;
}
