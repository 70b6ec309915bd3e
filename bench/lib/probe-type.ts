/**
 * What `npm run bench:probes -- --type <dns|ping|tls|udp|grpc>` needs of each protocol type
 * (bench/probe-types.ts runs them; one module per type, bench/lib/probe-type-<type>.ts):
 * loopback targets for N resources, and a baseline that does the same checks bare, so that the
 * daemon's CPU per check prints as a ratio against it (target at most 1.5×).
 */
export interface ProbeTypeTargets {
  /** The `target` and the type's options (`dns`, `udp`, …, as the API takes them) of resource i. */
  resource(i: number): { target: string; options?: Record<string, unknown> };
  /** Requests (or echoes, handshakes) the targets answered so far, where they can tell; null where not. */
  answered(): Promise<number | null>;
  stop(): Promise<void>;
}

export interface ProbeTypeBench {
  /** The resource type, as the API spells it. */
  type: 'DNS' | 'PING' | 'TLS' | 'UDP' | 'GRPC' | 'WEBSOCKET' | 'SSH';
  /** What the baseline is, in a few words (`a bare node:dns Resolver loop`). */
  baselineName: string;
  /** Starts the targets for `resources` resources, in a child process so that their CPU is not the daemon's. */
  start(resources: number): Promise<ProbeTypeTargets>;
  /**
   * The same checks done bare, `perSecond` of them for `seconds`, against the same targets, in a
   * child process: returns that process's CPU (user + system, ms) and the checks completed.
   */
  baseline(targets: ProbeTypeTargets, resources: number, perSecond: number, seconds: number): Promise<{ cpuMs: number; checks: number }>;
}
