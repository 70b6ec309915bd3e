import type { Principal } from '../auth/principal.ts';
import type { DaemonContext } from '../context.ts';
import { RawJson } from '../http/raw-json.ts';

/**
 * Rendered JSON of the hottest reads (the resource list and resource details,
 * per audience), kept until something they show changes: a resource or group
 * write (bus, visibility cache) drops everything, a check result drops that
 * resource's details and the lists (which carry every item's status). A read that raced a write never stores its result (the
 * generation moved on while it read). Entries also expire after `maxAgeMs`,
 * which bounds how stale a view can be after a write made by another daemon
 * pod on the same database.
 */
export class ReadCache {
  #generation = 0;
  readonly #entries = new Map<string, { text: string; at: number }>();
  readonly #capacity: number;
  readonly #maxAgeMs: number;

  constructor(capacity = 4096, maxAgeMs = 5_000) {
    this.#capacity = capacity;
    this.#maxAgeMs = maxAgeMs;
  }

  /** The cached body under `key`, or `produce()` rendered and cached. Errors are not cached. */
  async read(key: string, produce: () => Promise<unknown>): Promise<RawJson> {
    const hit = this.#entries.get(key);
    const now = Date.now();
    if (hit && now - hit.at < this.#maxAgeMs) return new RawJson(hit.text);
    const generation = this.#generation;
    const text = JSON.stringify(await produce());
    if (generation === this.#generation) {
      this.#entries.delete(key);
      if (this.#entries.size >= this.#capacity) this.#entries.delete(this.#entries.keys().next().value!);
      this.#entries.set(key, { text, at: now });
    }
    return new RawJson(text);
  }

  invalidateAll(): void {
    this.#generation++;
    this.#entries.clear();
  }

  invalidateResource(id: number): void {
    this.#generation++;
    for (const audience of AUDIENCES) {
      this.#entries.delete(detailKey(id, audience));
      this.#entries.delete(listKey(audience));
    }
  }

  /** Follows the bus and the monitoring channel of this daemon; returns the unsubscribe. */
  follow(ctx: DaemonContext): () => void {
    const all = () => this.invalidateAll();
    ctx.bus.on('resource.changed', all);
    ctx.bus.on('resource.deleted', all);
    const unlisten = ctx.events.channel('monitoring').listen((event) => {
      const id = (event.data as { resourceId?: unknown }).resourceId;
      if (typeof id === 'number') this.invalidateResource(id);
    });
    return () => {
      ctx.bus.off('resource.changed', all);
      ctx.bus.off('resource.deleted', all);
      unlisten();
    };
  }
}

const AUDIENCES = ['anonymous', 'user'] as const;

/** The seed's views differ only between anonymous and authenticated callers (ADMIN included). */
export function audience(principal: Principal): (typeof AUDIENCES)[number] {
  return principal.kind === 'anonymous' ? 'anonymous' : 'user';
}

export const listKey = (aud: string) => `list:${aud}`;
export const detailKey = (id: number, aud: string) => `detail:${id}:${aud}`;
