import type { IncomingMessage } from 'node:http';
import { readCookie } from '../../http/cookies.ts';
import { overTls } from '../../http/https-redirect.ts';
import type { SecretBox } from '../secret-box.ts';

/** The cookie between a correct password and the second step: only `/login/2fa` reads it. */
export const PENDING_COOKIE = 'monctl_login_2fa';
const PENDING_PATH = '/login/2fa';
export const PENDING_TTL_MS = 5 * 60_000;

/**
 * A password login waiting for its second step. Sealed (AES-GCM with the install secret), so
 * any pod can finish it and no one can forge or read it; no row is stored.
 */
export interface PendingLogin {
  userId: number;
  /** The CSRF token of the login page: the session keeps it, and the second form must echo it. */
  csrf: string;
  expiresAt: number;
  /** Enrolment at login (`--two-factor-required`): the secret shown, not yet confirmed. */
  secret?: string;
}

export function pendingCookie(box: SecretBox, pending: PendingLogin, req: IncomingMessage): string {
  return cookieLine(encodeURIComponent(box.seal(JSON.stringify(pending))), Math.floor(PENDING_TTL_MS / 1000), req);
}

export function clearPendingCookie(req: IncomingMessage): string {
  return cookieLine('', 0, req);
}

function cookieLine(value: string, maxAge: number, req: IncomingMessage): string {
  const parts = [`${PENDING_COOKIE}=${value}`, `Path=${PENDING_PATH}`, 'HttpOnly', 'SameSite=Lax', `Max-Age=${maxAge}`];
  if (overTls(req)) parts.push('Secure');
  return parts.join('; ');
}

/** The request's pending login, or undefined when absent, tampered with, expired or malformed. */
export function readPending(box: SecretBox, req: IncomingMessage, now = Date.now()): PendingLogin | undefined {
  const sealed = readCookie(req, PENDING_COOKIE);
  if (!sealed || sealed.length > 4096) return undefined;
  const plain = box.open(sealed);
  if (!plain) return undefined;
  try {
    const value = JSON.parse(plain) as Partial<PendingLogin>;
    if (!Number.isSafeInteger(value.userId) || typeof value.csrf !== 'string' || typeof value.expiresAt !== 'number') return undefined;
    if (value.secret !== undefined && typeof value.secret !== 'string') return undefined;
    return value.expiresAt > now ? (value as PendingLogin) : undefined;
  } catch {
    return undefined;
  }
}
