import type { DaemonContext } from '../context.ts';
import { boxFor, type SecretBox } from '../auth/secret-box.ts';

/**
 * Registry credentials for DOCKER checks of private registries. Passwords are
 * sealed with the install's secret box and only ever opened here, for the
 * probe; the API never returns them.
 */
export function registryBox(ctx: Pick<DaemonContext, 'installSecret'>): SecretBox {
  return boxFor(ctx.installSecret, 'registry-credentials');
}

/** Docker Hub answers under several names; credentials are stored under one. */
const ALIASES: Record<string, string> = {
  'index.docker.io': 'docker.io',
  'registry-1.docker.io': 'docker.io',
  'registry.hub.docker.com': 'docker.io',
};

/** The key a registry is stored under: lower-case `host[:port]`, Docker Hub aliases folded. */
export function normaliseRegistry(registry: string): string {
  const lower = registry
    .trim()
    .toLowerCase()
    .replace(/^https?:\/\//, '')
    .replace(/\/+$/, '');
  // Own keys only: a registry named `constructor` must not find Object's.
  return Object.hasOwn(ALIASES, lower) ? ALIASES[lower] : lower;
}

/** The credential for a registry (`host[:port]`), decrypted, or undefined when none is stored. */
export async function getRegistryCredential(
  ctx: Pick<DaemonContext, 'db' | 'log' | 'installSecret'>,
  registry: string,
): Promise<{ username: string; password: string } | undefined> {
  const row = await ctx.db
    .selectFrom('registry_credentials')
    .select(['username', 'password_enc'])
    .where('registry', '=', normaliseRegistry(registry))
    .executeTakeFirst();
  if (!row) return undefined;
  const password = registryBox(ctx).open(row.password_enc);
  if (password === undefined) {
    ctx.log.warn({ registry }, 'registry credential cannot be decrypted with this install secret');
    return undefined;
  }
  return { username: row.username, password };
}
