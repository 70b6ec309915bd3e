import { sha256 } from '../auth/tokens.ts';
import type { DaemonContext } from '../context.ts';
import type { AgentRow } from '../store/schema.ts';

/** Registration tokens look like `mta_<43 base64url chars>`; anything far off is not looked up. */
const TOKEN_SHAPE = /^mta_[A-Za-z0-9_-]{20,200}$/;

/**
 * The agent a registration token belongs to, or undefined. Tokens are stored
 * as their SHA-256; the lookup is by that digest, so the time it takes says
 * nothing about how close a guessed token came (constant-time by construction).
 */
export async function findAgentByToken(ctx: DaemonContext, token: string): Promise<AgentRow | undefined> {
  if (!TOKEN_SHAPE.test(token)) return undefined;
  return ctx.db.selectFrom('agents').selectAll().where('token_hash', '=', sha256(token)).executeTakeFirst();
}
