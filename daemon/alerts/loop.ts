import type { Logger } from '../logger.ts';

/**
 * A step run every `everyMs`, never twice at once: the next run is scheduled
 * when the previous one ends. A failing run is logged (once per error
 * message in a row) and the loop goes on.
 */
export class Loop {
  readonly #log: Logger;
  readonly #name: string;
  readonly #everyMs: number;
  readonly #step: () => Promise<unknown>;
  readonly #onPass: () => void;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #stopped = false;
  #again = false;
  #lastError = '';

  /** `onPass` is called after every run, failed or not. */
  constructor(log: Logger, name: string, everyMs: number, step: () => Promise<unknown>, onPass: () => void = () => {}) {
    this.#log = log;
    this.#name = name;
    this.#everyMs = everyMs;
    this.#step = step;
    this.#onPass = onPass;
  }

  start(): void {
    this.#schedule();
  }

  /**
   * Runs the step now, e.g. when new work was just written; if it is running, once more as soon
   * as it ends (the running pass may have read before the new work committed).
   */
  nudge(): void {
    if (this.#stopped) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    clearTimeout(this.#timer);
    this.#run();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#running;
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => this.#run(), this.#everyMs);
    this.#timer.unref();
  }

  #run(): void {
    this.#running = this.#step()
      .then(
        () => {
          this.#lastError = '';
        },
        (err: Error) => {
          if (err?.message !== this.#lastError) this.#log.error({ err }, `${this.#name} failed`);
          this.#lastError = err?.message ?? '';
        },
      )
      .finally(() => {
        this.#running = undefined;
        this.#onPass();
        if (this.#again && !this.#stopped) {
          this.#again = false;
          this.#run();
        } else this.#schedule();
      });
  }
}
