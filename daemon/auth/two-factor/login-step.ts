import type { IncomingMessage } from 'node:http';
import type { Role } from '../../../src/api/schemas/auth.ts';
import type { DaemonContext } from '../../context.ts';
import { boxFor } from '../secret-box.ts';
import { factorRequired } from './factor.ts';
import { PENDING_TTL_MS, pendingCookie } from './pending-login.ts';
import { newSecret } from './totp.ts';

/**
 * After a correct password: the pending-login cookie when the user must pass a second step
 * (a code, or enrolling where `--two-factor-required` demands it), else undefined and the
 * login completes at once.
 */
export async function secondStep(
  ctx: DaemonContext,
  user: { id: number; role: string; totp_enabled_at: number | null },
  csrf: string,
  req: IncomingMessage,
): Promise<string | undefined> {
  const box = boxFor(ctx.installSecret, 'pending-logins');
  const base = { userId: user.id, csrf, expiresAt: Date.now() + PENDING_TTL_MS };
  if (user.totp_enabled_at !== null) return pendingCookie(box, base, req);
  if (factorRequired(ctx.config, user.role as Role)) return pendingCookie(box, { ...base, secret: newSecret() }, req);
  return undefined;
}
