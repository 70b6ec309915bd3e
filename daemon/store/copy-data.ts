import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Kysely } from 'kysely';
import { lockDataDir } from './dialect/sqlite-lock.ts';
import { advanceIdentity, tablesInForeignKeyOrder } from './dialect/postgres-copy.ts';
import { describePostgresUrl } from './dialect/postgres.ts';
import { openStore } from './store.ts';

/** Rows per INSERT, and bind parameters per INSERT at most (PostgreSQL's limit is 65,535). */
const BATCH_ROWS = 1_000;
const MAX_PARAMETERS = 30_000;

export interface TableCount {
  table: string;
  source: number;
  target: number;
}

export interface CopyOutcome {
  target: string;
  tables: TableCount[];
  /** Tables whose counts differ after the copy (empty when it worked). */
  mismatched: string[];
}

/** A refusal the CLI reports as such (exit 1, no stack). */
export class CopyRefused extends Error {}

/** The pods' own state, which the migrations seed and a single daemon never uses: not copied, not compared. */
const RUNTIME = new Set(['shard_leases', 'cluster_members', 'event_channels', 'event_spill']);
const skip = (table: string) => table.startsWith('kysely_') || RUNTIME.has(table);

/**
 * `monctl daemon copy-data --from DIR --to postgres://…`: copies a SQLite
 * install into an empty PostgreSQL database, every table in one transaction
 * (a failure leaves the target as empty as it was), then moves the identity
 * sequences past the copied ids and compares row counts table by table.
 *
 * The data directory is locked for the copy, so no daemon can write to it
 * meanwhile (stop it first); both sides are migrated to this version first,
 * so their tables and columns match.
 */
export async function copyData(fromDir: string, toUrl: string, progress: (line: string) => void = () => {}): Promise<CopyOutcome> {
  if (!existsSync(join(fromDir, 'monctl.db'))) throw new CopyRefused(`no SQLite database at ${join(fromDir, 'monctl.db')}`);
  const lock = lockDataDir(fromDir);
  try {
    const source = await openStore(fromDir);
    try {
      const target = await openStore(fromDir, toUrl);
      try {
        return await copyStores(source.db as Kysely<any>, target.db as Kysely<any>, describePostgresUrl(toUrl), progress);
      } finally {
        await target.close();
      }
    } finally {
      await source.close();
    }
  } finally {
    lock.release();
  }
}

async function copyStores(from: Kysely<any>, to: Kysely<any>, target: string, progress: (line: string) => void): Promise<CopyOutcome> {
  const sourceTables = new Map((await from.introspection.getTables()).filter((t) => !t.isView && !skip(t.name)).map((t) => [t.name, t]));
  const targetTables = new Map((await to.introspection.getTables()).filter((t) => !t.isView && !skip(t.name)).map((t) => [t.name, t]));
  for (const name of sourceTables.keys()) {
    if (!targetTables.has(name)) throw new CopyRefused(`table ${name} of the SQLite database is missing in ${target}`);
  }
  const counts = async (db: Kysely<any>, table: string) =>
    Number(
      (
        await db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  const busy: string[] = [];
  for (const name of targetTables.keys()) if ((await counts(to, name)) > 0) busy.push(name);
  if (busy.length > 0) {
    throw new CopyRefused(`${target} is not empty (rows in ${busy.join(', ')}): copy-data fills an empty database only`);
  }

  const order = await tablesInForeignKeyOrder(to, [...sourceTables.keys()]);
  await to.transaction().execute(async (trx) => {
    for (const table of order) {
      const columns = sourceTables.get(table)!.columns.map((c) => c.name);
      const targetColumns = new Set(targetTables.get(table)!.columns.map((c) => c.name));
      const missing = columns.filter((c) => !targetColumns.has(c));
      if (missing.length > 0) throw new CopyRefused(`columns ${missing.join(', ')} of ${table} are missing in ${target}`);
      const perBatch = Math.max(1, Math.min(BATCH_ROWS, Math.floor(MAX_PARAMETERS / columns.length)));
      let batch: Array<Record<string, unknown>> = [];
      let copied = 0;
      const flush = async () => {
        if (batch.length === 0) return;
        await trx.insertInto(table).values(batch).execute();
        copied += batch.length;
        batch = [];
      };
      for await (const row of from.selectFrom(table).select(columns).stream(perBatch)) {
        batch.push(row);
        if (batch.length >= perBatch) await flush();
      }
      await flush();
      if (targetColumns.has('id')) await advanceIdentity(trx, table);
      progress(`${table}: ${copied} rows`);
    }
  });

  const tables: TableCount[] = [];
  for (const table of order) tables.push({ table, source: await counts(from, table), target: await counts(to, table) });
  return { target, tables, mismatched: tables.filter((t) => t.source !== t.target).map((t) => t.table) };
}
