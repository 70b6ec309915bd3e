import type { StorageError, StorageErrorKind } from './storage-error.ts';

export type StorageStatus = 'UP' | 'DEGRADED' | 'DOWN';

export interface StorageCondition {
  status: StorageStatus;
  /** What is wrong when the status is not UP. */
  reason?: StorageErrorKind;
  /** The error code behind a status other than UP. */
  code?: string;
  since?: number;
}

type Fault = { code: string; since: number };

/**
 * What the store has learned from its own queries, for `/actuator/health`:
 * - DEGRADED from a write that failed for lack of space until a write commits
 *   again (a request's, the scheduler's, or the store's own probe write);
 * - DOWN from the first sign of a corrupt file, until restart (a damaged file
 *   does not heal; a restart after repair starts UP);
 * - DOWN while the database server cannot be reached (PostgreSQL), until a
 *   query succeeds again.
 */
export class StorageHealth {
  #full: Fault | undefined;
  #corrupt: Fault | undefined;
  #unavailable: Fault | undefined;
  readonly #listeners = new Set<(condition: StorageCondition, error?: StorageError) => void>();

  get condition(): StorageCondition {
    if (this.#corrupt) return { status: 'DOWN', reason: 'corrupt', ...this.#corrupt };
    if (this.#unavailable) return { status: 'DOWN', reason: 'unavailable', ...this.#unavailable };
    if (this.#full) return { status: 'DEGRADED', reason: 'full', ...this.#full };
    return { status: 'UP' };
  }

  /** Called with every corrupt error (not only the first) and with every other change of the condition. */
  onChange(listener: (condition: StorageCondition, error?: StorageError) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  failed(error: StorageError): void {
    const fault = { code: error.code, since: Date.now() };
    if (error.kind === 'corrupt') {
      this.#corrupt ??= fault;
    } else if (error.kind === 'unavailable') {
      if (this.#unavailable) return;
      this.#unavailable = fault;
    } else {
      if (this.#full) return;
      this.#full = fault;
    }
    this.#emit(error);
  }

  /** A write committed: there is space again (and the server is reachable). */
  wrote(): void {
    if (!this.#full && !this.#unavailable) return;
    this.#full = undefined;
    this.#unavailable = undefined;
    this.#emit();
  }

  /** A query succeeded: the server is reachable again. */
  reached(): void {
    if (!this.#unavailable) return;
    this.#unavailable = undefined;
    this.#emit();
  }

  #emit(error?: StorageError): void {
    for (const listener of this.#listeners) listener(this.condition, error);
  }
}
