import type { PoolHealth } from '../../../src/api/schemas/route-pools.ts';

/**
 * One pool agent's run of check outcomes on one route: `unhealthyAfter` failures in a row make it
 * UNHEALTHY, `healthyAfter` passes in a row HEALTHY; until either, it has no verdict (UNKNOWN, in
 * the rotation). A check the agent could not run (not connected, too old, its queue full) moves
 * neither count: it says nothing of the target.
 */
export class Streak {
  /** The verdict: null until the first run of outcomes reached a threshold. */
  healthy: boolean | null = null;
  /** Why the last check failed or did not run; null after a pass. */
  error: string | null = null;
  #fails = 0;
  #passes = 0;

  /** Records a check's outcome; returns whether the verdict or the error text changed. */
  record(outcome: { pass: boolean; error: string | null } | { skipped: string }, after: { unhealthy: number; healthy: number }): boolean {
    const before = `${this.healthy}/${this.error}`;
    if ('skipped' in outcome) this.error = `not checked: ${outcome.skipped}`;
    else {
      this.error = outcome.error;
      if (outcome.pass) {
        this.#fails = 0;
        this.#passes++;
        if (this.#passes >= after.healthy) this.healthy = true;
      } else {
        this.#passes = 0;
        this.#fails++;
        if (this.#fails >= after.unhealthy) this.healthy = false;
      }
    }
    return `${this.healthy}/${this.error}` !== before;
  }
}

/** The API's word for a verdict. */
export function healthOf(healthy: boolean | null): PoolHealth {
  return healthy === null ? 'UNKNOWN' : healthy ? 'HEALTHY' : 'UNHEALTHY';
}

/** The verdict a ROUTE_HEALTH event carries (UNKNOWN and NOT_CHECKED: none). */
export function verdictOf(health: PoolHealth): boolean | null {
  return health === 'HEALTHY' ? true : health === 'UNHEALTHY' ? false : null;
}
