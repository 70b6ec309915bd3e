import { randomUUID } from 'node:crypto';
import type { Logger } from '../logger.ts';
import type { PodNotifications } from '../store/opened-store.ts';

/** The NOTIFY channels of pods: messages between daemons, and table changes (from the triggers of migration 0012). */
export const MESSAGES_CHANNEL = 'monctl_pods';
export const TABLES_CHANNEL = 'monctl_tables';

/** How long table-change notifications are gathered before the reloads run (a burst of writes reloads once). */
const TABLES_SETTLE_MS = 20;

/**
 * Messages between the pods of one PostgreSQL database, over LISTEN/NOTIFY:
 * topics with small JSON payloads (a pod ignores its own), and "table X
 * changed" notifications that the database itself sends on commit, which
 * keep every pod's caches (CORS, visibility, routes, pages, maintenance,
 * rules) in step within a second, whoever wrote. After the listening
 * connection was lost, every table counts as changed.
 */
export class PodMessages {
  readonly instance = randomUUID();
  readonly #notifications: PodNotifications;
  readonly #log: Logger;
  readonly #topics = new Map<string, Set<(data: any) => void>>();
  readonly #tables = new Map<string, Set<() => void>>();
  #changed = new Set<string>();
  #settle: NodeJS.Timeout | undefined;

  constructor(notifications: PodNotifications, log: Logger) {
    this.#notifications = notifications;
    this.#log = log;
    notifications.listen(MESSAGES_CHANNEL, (payload) => this.#message(payload));
    notifications.listen(TABLES_CHANNEL, (table) => this.#tableChanged(table));
    notifications.onGap(() => {
      for (const table of this.#tables.keys()) this.#tableChanged(table);
    });
  }

  /** Sends to every other pod; failures are logged (a message is a hint, never the truth: that is in the database). */
  send(topic: string, data: unknown): void {
    const payload = JSON.stringify({ i: this.instance, t: topic, d: data });
    this.#notifications
      .notify(MESSAGES_CHANNEL, payload)
      .catch((err) => this.#log.warn({ err, topic }, 'message to the other pods failed'));
  }

  on(topic: string, handler: (data: any) => void): () => void {
    let set = this.#topics.get(topic);
    if (!set) this.#topics.set(topic, (set = new Set()));
    set.add(handler);
    return () => set.delete(handler);
  }

  /** Calls `reload` after any pod (this one included) committed a change to one of `tables`. */
  onTables(tables: string[], reload: () => unknown): () => void {
    const handler = () => {
      try {
        Promise.resolve(reload()).catch((err) => this.#log.warn({ err, tables }, 'reload after a change by another pod failed'));
      } catch (err) {
        this.#log.warn({ err, tables }, 'reload after a change by another pod failed');
      }
    };
    for (const table of tables) {
      let set = this.#tables.get(table);
      if (!set) this.#tables.set(table, (set = new Set()));
      set.add(handler);
    }
    return () => tables.forEach((t) => this.#tables.get(t)?.delete(handler));
  }

  #message(payload: string): void {
    let message: { i: string; t: string; d: unknown };
    try {
      message = JSON.parse(payload);
    } catch {
      return;
    }
    if (message.i === this.instance) return;
    for (const handler of this.#topics.get(message.t) ?? []) {
      try {
        handler(message.d);
      } catch (err) {
        this.#log.warn({ err, topic: message.t }, 'handling a message from another pod failed');
      }
    }
  }

  #tableChanged(table: string): void {
    if (!this.#tables.has(table)) return;
    this.#changed.add(table);
    this.#settle ??= setTimeout(() => {
      this.#settle = undefined;
      const handlers = new Set<() => void>();
      for (const t of this.#changed) for (const h of this.#tables.get(t) ?? []) handlers.add(h);
      this.#changed = new Set();
      for (const handler of handlers) handler();
    }, TABLES_SETTLE_MS);
  }
}
