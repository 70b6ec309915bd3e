import type { OpenedStore } from './opened-store.ts';

/** How often a DEGRADED store tries a write of its own. */
export const WRITE_PROBE_MS = 5_000;

/**
 * While writes fail for lack of space, writes one settings row every few
 * seconds, so that health returns to UP once space is back even when nothing
 * else writes (no requests, no checks). Any committed write clears DEGRADED
 * (store/dialect/sqlite-driver.ts reports it); this is only the fallback.
 */
export function probeWritesWhileDegraded(store: OpenedStore): () => void {
  let timer: NodeJS.Timeout | undefined;
  const probe = async () => {
    const value = String(Date.now());
    await store.db
      .insertInto('settings')
      .values({ key: 'write_probe', value })
      .onConflict((oc) => oc.column('key').doUpdateSet({ value }))
      .execute()
      .catch(() => {}); // still full: the failure is already recorded
  };
  const unsubscribe = store.health.onChange(({ status }) => {
    if (status === 'DEGRADED' && !timer) {
      timer = setInterval(probe, WRITE_PROBE_MS);
      timer.unref();
    } else if (status !== 'DEGRADED' && timer) {
      clearInterval(timer);
      timer = undefined;
    }
  });
  return () => {
    unsubscribe();
    clearInterval(timer);
  };
}
