import type { Kysely, Transaction } from 'kysely';
import { HttpError } from '../../src/errors.ts';
import type { Database } from '../store/schema.ts';

type Db = Kysely<Database> | Transaction<Database>;

/**
 * A status page with a custom hostname takes the prefix `/` of that host on
 * the edge listener, as an HTTP route would: a route on the same hostname and
 * prefix and such a page cannot both exist (409, whichever comes second).
 */
export async function routeOnPageHost(db: Db, hostname: string): Promise<{ name: string } | undefined> {
  return db
    .selectFrom('routes')
    .select('name')
    .where('type', '=', 'HTTP')
    .where('hostname', '=', hostname)
    .where((eb) => eb.or([eb('path_prefix', '=', '/'), eb('path_prefix', 'is', null)]))
    .executeTakeFirst();
}

/** The status page serving `hostname` at `/`, if any. */
export async function pageOnHost(db: Db, hostname: string): Promise<{ slug: string } | undefined> {
  return db.selectFrom('status_pages').select('slug').where('custom_hostname', '=', hostname).executeTakeFirst();
}

/** For the routes API: 409 naming `hostname` when a status page serves this hostname at `/`. */
export async function checkRouteAgainstPages(db: Db, hostname: string | null, pathPrefix: string | null): Promise<void> {
  if (hostname === null || (pathPrefix ?? '/') !== '/') return;
  const page = await pageOnHost(db, hostname);
  if (!page) return;
  const detail = `Status page ${page.slug} serves ${hostname}/ (its customHostname)`;
  throw new HttpError(409, 'conflict', detail, { errors: [{ field: 'hostname', message: detail }] });
}
