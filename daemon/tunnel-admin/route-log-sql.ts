import { CompiledQuery, type Kysely } from 'kysely';
import type { Database } from '../store/schema.ts';

/** route_log's columns in the order their values are bound (id aside). */
export const ROUTE_LOG_COLUMNS = [
  'route_id',
  'at',
  'method',
  'path',
  'status',
  'duration_ms',
  'bytes_in',
  'bytes_out',
  'client_ip',
  'agent_id',
  'pod_id',
  'error',
] as const;

type Row = Record<(typeof ROUTE_LOG_COLUMNS)[number], unknown>;
/** A value no real parameter has, to find where kysely put a parameter in a compiled statement. */
const MARK = -7_340_001;

/**
 * The access log's statements, built and compiled by kysely once per shape (so
 * in the dialect's own SQL) and then run with new parameters: a batch costs no
 * query building and no compiling, only the statements themselves (prepared
 * once too, by the store's statement cache). Issue 20: kysely's building and
 * compiling of the batch insert were a visible share of the daemon's CPU per
 * proxied request.
 */
export class RouteLogSql {
  readonly #db: Kysely<Database>;
  readonly #keep: number;
  readonly #inserts = new Map<number, string>();
  #cutoff: { sql: string; at: number; parameters: readonly unknown[] } | undefined;
  #prune: { sql: string; route: number; id: number } | undefined;

  /** `keep`: the entries kept per route. */
  constructor(db: Kysely<Database>, keep: number) {
    this.#db = db;
    this.#keep = keep;
  }

  /** Inserts rows (values in ROUTE_LOG_COLUMNS order, row after row) and answers their ids. */
  insert(rows: number, values: unknown[]): CompiledQuery<{ id: number }> {
    let sql = this.#inserts.get(rows);
    if (sql === undefined) {
      const row = Object.fromEntries(ROUTE_LOG_COLUMNS.map((c) => [c, null])) as Row;
      sql = this.#db
        .insertInto('route_log')
        .values(Array.from({ length: rows }, () => ({ ...row })) as never)
        .returning('id')
        .compile().sql;
      this.#inserts.set(rows, sql);
    }
    return CompiledQuery.raw(sql, values) as CompiledQuery<{ id: number }>;
  }

  /** The id at and below which a route's entries are beyond retention (none when it has fewer). */
  cutoff(routeId: number): CompiledQuery<{ id: number }> {
    if (!this.#cutoff) {
      const compiled = this.#db
        .selectFrom('route_log')
        .select('id')
        .where('route_id', '=', MARK)
        .orderBy('id', 'desc')
        .limit(1)
        .offset(this.#keep)
        .compile();
      this.#cutoff = { sql: compiled.sql, at: compiled.parameters.indexOf(MARK), parameters: compiled.parameters };
    }
    const parameters = [...this.#cutoff.parameters];
    parameters[this.#cutoff.at] = routeId;
    return CompiledQuery.raw(this.#cutoff.sql, parameters) as CompiledQuery<{ id: number }>;
  }

  /** Deletes a route's entries up to an id. */
  prune(routeId: number, upTo: number): CompiledQuery {
    if (!this.#prune) {
      const compiled = this.#db
        .deleteFrom('route_log')
        .where('route_id', '=', MARK)
        .where('id', '<=', MARK - 1)
        .compile();
      this.#prune = { sql: compiled.sql, route: compiled.parameters.indexOf(MARK), id: compiled.parameters.indexOf(MARK - 1) };
    }
    const parameters: unknown[] = [];
    parameters[this.#prune.route] = routeId;
    parameters[this.#prune.id] = upTo;
    return CompiledQuery.raw(this.#prune.sql, parameters);
  }
}
