import type { StorageError } from './storage-error.ts';

export type StorageStatus = 'UP' | 'DEGRADED' | 'DOWN';

export interface StorageCondition {
  status: StorageStatus;
  /** The error code behind a status other than UP. */
  code?: string;
  since?: number;
}

/**
 * What the store has learned from its own queries, for `/actuator/health`:
 * - DEGRADED from a write that failed for lack of space until a write commits
 *   again (a request's, the scheduler's, or the store's own probe write);
 * - DOWN from the first sign of a corrupt file, until restart (a damaged file
 *   does not heal; a restart after repair starts UP).
 */
export class StorageHealth {
  #full: { code: string; since: number } | undefined;
  #corrupt: { code: string; since: number } | undefined;
  readonly #listeners = new Set<(condition: StorageCondition, error?: StorageError) => void>();

  get condition(): StorageCondition {
    if (this.#corrupt) return { status: 'DOWN', ...this.#corrupt };
    if (this.#full) return { status: 'DEGRADED', ...this.#full };
    return { status: 'UP' };
  }

  /** Called with every corrupt error (not only the first) and with every change between UP and DEGRADED. */
  onChange(listener: (condition: StorageCondition, error?: StorageError) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  failed(error: StorageError): void {
    if (error.kind === 'corrupt') {
      this.#corrupt ??= { code: error.code, since: Date.now() };
    } else {
      if (this.#full) return;
      this.#full = { code: error.code, since: Date.now() };
    }
    this.#emit(error);
  }

  /** A write committed: there is space again. */
  wrote(): void {
    if (!this.#full) return;
    this.#full = undefined;
    this.#emit();
  }

  #emit(error?: StorageError): void {
    for (const listener of this.#listeners) listener(this.condition, error);
  }
}
