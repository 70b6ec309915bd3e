import { type Kysely, sql } from 'kysely';

/**
 * PostgreSQL catalog queries for `monctl daemon copy-data`: the order in which
 * tables can be filled without breaking a foreign key, and the identity
 * sequences to move past the copied ids.
 */

/** Tables of the public schema, parents before the tables whose foreign keys point at them. */
export async function tablesInForeignKeyOrder(db: Kysely<any>, tables: string[]): Promise<string[]> {
  const { rows } = await sql<{ child: string; parent: string }>`
    SELECT child.relname AS child, parent.relname AS parent
    FROM pg_constraint c
    JOIN pg_class child ON child.oid = c.conrelid
    JOIN pg_class parent ON parent.oid = c.confrelid
    WHERE c.contype = 'f' AND child.relnamespace = 'public'::regnamespace`.execute(db);
  const parents = new Map<string, Set<string>>(tables.map((t) => [t, new Set()]));
  for (const { child, parent } of rows) if (child !== parent) parents.get(child)?.add(parent);
  const ordered: string[] = [];
  const placed = new Set<string>();
  const visit = (table: string, path: Set<string>) => {
    if (placed.has(table)) return;
    if (path.has(table)) throw new Error(`foreign keys form a cycle through ${table}`);
    path.add(table);
    for (const parent of parents.get(table) ?? []) if (parents.has(parent)) visit(parent, path);
    path.delete(table);
    placed.add(table);
    ordered.push(table);
  };
  for (const table of [...tables].sort()) visit(table, new Set());
  return ordered;
}

/**
 * Moves the identity sequence of `table.id` past the largest id copied, so
 * that the next insert does not collide. Returns false when the table has no
 * identity column.
 */
export async function advanceIdentity(db: Kysely<any>, table: string): Promise<boolean> {
  const {
    rows: [seq],
  } = await sql<{ name: string | null }>`SELECT pg_get_serial_sequence(${table}, 'id') AS name`.execute(db);
  if (!seq?.name) return false;
  await sql`SELECT setval(${seq.name}::regclass, COALESCE((SELECT max(id) FROM ${sql.table(table)}), 1), (SELECT count(*) > 0 FROM ${sql.table(table)}))`.execute(
    db,
  );
  return true;
}
