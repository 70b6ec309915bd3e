import type { Kysely } from 'kysely';
import { shapedChunks } from '../../store/batches.ts';
import type { Database } from '../../store/schema.ts';
import type { AlertItem } from '../types.ts';

/** Dependents named in a message, per item; the rest are counted. */
export const MAX_DEPENDENT_NAMES = 20;

/**
 * Fills `dependents` on the INCIDENT_OPENED items of resources that others depend on
 * (docs/API.md#dependencies): the active dependents whose alerts are held back because of it
 * now, those with an open incident or failing towards one. Counted when the message is built:
 * a dependent that starts failing after the message left is not in it. One query per 256 items.
 */
export async function addDependents(db: Kysely<Database>, items: AlertItem[]): Promise<void> {
  const openings = items.filter((i) => i.kind === 'INCIDENT_OPENED' && i.subject.type === 'resource');
  const found = new Map<number, { count: number; names: string[] }>();
  for (const part of shapedChunks([...new Set(openings.map((i) => i.subject.id))], 256)) {
    const rows = await db
      .selectFrom('resource_dependencies as d')
      .innerJoin('resources as r', 'r.id', 'd.resource_id')
      .select(['d.depends_on_id', 'r.name'])
      .where('d.depends_on_id', 'in', part)
      .where('r.active', '=', 1)
      .where((eb) => eb.or([eb('r.open_incident_id', 'is not', null), eb('r.fail_streak', '>', 0)]))
      .orderBy('r.name')
      .execute();
    for (const row of rows) {
      const entry = found.get(Number(row.depends_on_id)) ?? { count: 0, names: [] };
      entry.count++;
      if (entry.names.length < MAX_DEPENDENT_NAMES) entry.names.push(row.name);
      found.set(Number(row.depends_on_id), entry);
    }
  }
  for (const item of openings) {
    const entry = found.get(item.subject.id);
    if (entry) item.dependents = { count: entry.count, names: [...entry.names] };
  }
}
