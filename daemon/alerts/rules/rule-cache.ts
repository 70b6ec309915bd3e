import type { Kysely } from 'kysely';
import type { Database } from '../../store/schema.ts';
import { parseRule, type Rule } from './rule-row.ts';

/** Rules change rarely and other pods may change them: kept in memory, reloaded on change and every RELOAD_MS. */
const RELOAD_MS = 10_000;

export class RuleCache {
  readonly #db: Kysely<Database>;
  #rules: Rule[] | undefined;
  #loadedAt = 0;

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  invalidate(): void {
    this.#rules = undefined;
  }

  async get(now = Date.now()): Promise<Rule[]> {
    if (!this.#rules || now - this.#loadedAt > RELOAD_MS) {
      const rows = await this.#db.selectFrom('alert_rules').selectAll().where('enabled', '=', 1).orderBy('id').execute();
      this.#rules = rows.map(parseRule);
      this.#loadedAt = now;
    }
    return this.#rules;
  }
}
