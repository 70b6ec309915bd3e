/**
 * The `resources.conditions` column (migration 0017), read by the scheduler and the API alike:
 * the conditions' texts as a JSON array, NULL when none.
 */
/** The `conditions` column: the texts as JSON, NULL for none (so a resource without any stays as before). */
export function conditionsColumn(list: readonly string[]): string | null {
  return list.length ? JSON.stringify(list) : null;
}

/** The texts stored in the `conditions` column; a value that is not a list of strings reads as none. */
export function conditionsOf(column: string | null): string[] {
  if (!column) return [];
  try {
    const list: unknown = JSON.parse(column);
    return Array.isArray(list) && list.every((c) => typeof c === 'string') ? list : [];
  } catch {
    return [];
  }
}

/** Whether two lists of conditions are the same texts in the same order. */
export function sameConditions(a: readonly string[] = [], b: readonly string[] = []): boolean {
  return a.length === b.length && a.every((c, i) => c === b[i]);
}
