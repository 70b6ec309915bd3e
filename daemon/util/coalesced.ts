/**
 * A reload that many callers may ask for at once: the first call starts it,
 * calls made while it runs share it and make it run once more afterwards, so
 * every caller waits for a load that started after its own call.
 */
export class CoalescedReload {
  readonly #load: () => Promise<void>;
  #running: Promise<void> | undefined;
  #again = false;

  constructor(load: () => Promise<void>) {
    this.#load = load;
  }

  /** The reload under way, if any. */
  get running(): Promise<void> | undefined {
    return this.#running;
  }

  /** Something changed meanwhile: a reload under way reads once more. */
  invalidate(): void {
    if (this.#running) this.#again = true;
  }

  run(): Promise<void> {
    if (this.#running) {
      this.#again = true;
      return this.#running;
    }
    this.#running = (async () => {
      try {
        do {
          this.#again = false;
          await this.#load();
        } while (this.#again);
      } finally {
        this.#running = undefined;
      }
    })();
    return this.#running;
  }
}
