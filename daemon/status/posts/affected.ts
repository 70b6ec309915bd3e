import type { Kysely, Transaction } from 'kysely';
import { invalidField } from '../../../src/errors.ts';
import type { Database, PostedImpact } from '../../store/schema.ts';
import { parseIds } from '../json-ids.ts';
import type { PageRow } from '../live-state.ts';

type Db = Kysely<Database> | Transaction<Database>;
export interface Affected {
  id: number;
  impact: PostedImpact;
}

/**
 * The resources some visitor could see on the page: members of its groups (all
 * groups when it names none), HIDDEN groups left out as the page leaves them out.
 * An incident may name only these: one on no page of the visitor's would tell
 * readers of a resource the page never shows.
 */
async function onPage(db: Db, page: PageRow, ids: number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const wanted = parseIds(page.group_ids);
  let groups = db.selectFrom('groups').select('id').where('visibility', '!=', 'HIDDEN');
  if (wanted.length) groups = groups.where('id', 'in', wanted);
  const rows = await db
    .selectFrom('resource_groups')
    .select('resource_id')
    .distinct()
    .where('resource_id', 'in', ids)
    .where('group_id', 'in', groups)
    .execute();
  return new Set(rows.map((r) => r.resource_id));
}

/** The affected resources of a body, each impact filled in; 400 naming `field` for a repeat or a resource not on the page. */
export async function checkAffected(
  db: Db,
  page: PageRow,
  list: Array<{ id: number; impact?: PostedImpact }>,
  impact: PostedImpact,
  field = 'resources',
): Promise<Affected[]> {
  const ids = list.map((r) => r.id);
  const repeated = ids.find((id, i) => ids.indexOf(id) !== i);
  if (repeated !== undefined) throw invalidField(field, `resource ${repeated} is listed twice`);
  const shown = await onPage(db, page, ids);
  const missing = ids.find((id) => !shown.has(id));
  if (missing !== undefined) throw invalidField(field, `resource ${missing} is not on status page ${page.slug}`);
  return list.map((r) => ({ id: r.id, impact: r.impact ?? impact }));
}

/** Whether the resource could show on the page (promotion checks the automatic incident's resource). */
export async function isOnPage(db: Db, page: PageRow, resourceId: number): Promise<boolean> {
  return (await onPage(db, page, [resourceId])).has(resourceId);
}

/** The incident's affected resources become `list`. */
export async function replaceAffected(db: Db, incidentId: number, list: Affected[]): Promise<void> {
  await db.deleteFrom('status_incident_resources').where('incident_id', '=', incidentId).execute();
  if (list.length === 0) return;
  await db
    .insertInto('status_incident_resources')
    .values(list.map((r) => ({ incident_id: incidentId, resource_id: r.id, impact: r.impact })))
    .execute();
}
