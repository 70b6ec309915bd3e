/**
 * Row counts a multi-row statement may have: powers of four up to 256.
 *
 * Every row count is its own SQL text and so its own prepared statement.
 * Batches of arbitrary sizes either filled the statement cache with
 * near-duplicates of large compiled programs, or, left uncached, prepared and
 * freed one per batch; both showed as RSS creep in the soak. Cut
 * into these sizes, a batch of any length runs as at most three statements of
 * each size below the largest, all of them prepared once and reused.
 */
const SIZES = [256, 64, 16, 4, 1] as const;

/**
 * Splits `items` into consecutive chunks whose lengths are all in SIZES,
 * largest first, none longer than `max` (the caller's bind-parameter budget:
 * rows times parameters per row must stay under every dialect's limit).
 */
export function shapedChunks<T>(items: readonly T[], max: number): T[][] {
  const sizes = SIZES.filter((n) => n <= max);
  const out: T[][] = [];
  let i = 0;
  for (const size of sizes) {
    while (items.length - i >= size) {
      out.push(items.slice(i, i + size));
      i += size;
    }
  }
  return out;
}
