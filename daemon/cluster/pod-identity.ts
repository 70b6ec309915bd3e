import { hostname } from 'node:os';

/**
 * Which pod this daemon is. The name is the podName setting
 * (`MONCTL_POD_NAME`), else `<hostname>:<API port>`, so the same daemon gets
 * the same pod after a restart; it is fixed when daemon.ts builds the context
 * (before the listeners bind), so that every part of the daemon (the pods row,
 * cluster_members, relays, alert claims) names it alike. The id is that of its
 * `pods` row, known once tunnel-admin registered it, before any listener accepts.
 */
export class PodIdentity {
  readonly name: string;
  #id: number | undefined;

  constructor(config: { podName?: string; listen: { port: number } }) {
    const configured = config.podName?.trim();
    this.name = (configured || `${hostname()}:${config.listen.port}`).slice(0, 200);
  }

  /** The id of this daemon's `pods` row; throws before registration. */
  get id(): number {
    if (this.#id === undefined) throw new Error('pod not registered yet');
    return this.#id;
  }

  /** Called by the registration (tunnel-admin/pods.ts) with the row's id. */
  registered(id: number): void {
    this.#id = id;
  }
}
