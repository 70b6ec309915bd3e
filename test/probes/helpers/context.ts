import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_AGENT_GRACE_SECONDS, DEFAULT_CERT_EXPIRY_DAYS } from '../../../daemon/config/incident-defaults.ts';
import { MaintenanceCache } from '../../../daemon/alerts/maintenance/cache.ts';
import { Bus } from '../../../daemon/bus.ts';
import { PodIdentity } from '../../../daemon/cluster/pod-identity.ts';
import type { DaemonContext } from '../../../daemon/context.ts';
import { EventHub } from '../../../daemon/events/channel.ts';
import { createLogger } from '../../../daemon/logger.ts';
import { createMetrics } from '../../../daemon/metrics/metrics.ts';
import { defaultProbeConfig, type ProbeConfig } from '../../../daemon/config/probe-config.ts';
import { createDaemonProber } from '../../../daemon/probes/prober.ts';
import type { SchedulerDeps } from '../../../daemon/probes/scheduler.ts';
import { openStore } from '../../../daemon/store/store.ts';
import type { AgentProbeDeps } from '../../../daemon/tunnel/remote-probes.ts';
import { nothingConnected } from '../../../daemon/tunnel-control.ts';

/** What the probe engine's tests use of a daemon: the scheduler's and the remote checks' dependencies, and one prober. */
export type ProbeContext = SchedulerDeps & AgentProbeDeps & Pick<DaemonContext, 'prober' | 'store'> & { config: { probes: ProbeConfig } };

export interface TestContext {
  ctx: ProbeContext;
  dataDir: string;
  /** Closes the database and removes the directory unless `keep`. */
  close(keep?: boolean): Promise<void>;
}

/**
 * The parts of a daemon context the probe engine uses, over a real SQLite
 * file with every migration applied: the scheduler runs in-process so that
 * tests can observe due times without a child process.
 */
export async function openContext(probes: Partial<ProbeConfig> = {}, dataDir?: string): Promise<TestContext> {
  const dir = dataDir ?? mkdtempSync(join(tmpdir(), 'monctl-sched-'));
  const store = await openStore(dir);
  const config = {
    probes: { ...defaultProbeConfig(), ...probes },
    incidents: { agentGraceSeconds: DEFAULT_AGENT_GRACE_SECONDS, certExpiryDays: [...DEFAULT_CERT_EXPIRY_DAYS] },
  };
  const base = { db: store.db, log: createLogger('silent'), bus: new Bus() };
  const ctx: ProbeContext = {
    ...base,
    config,
    store,
    metrics: createMetrics(),
    events: new EventHub(),
    installSecret: new Uint8Array(32).fill(5),
    tunnel: nothingConnected,
    pod: new PodIdentity({ podName: 'probe-tests', listen: { port: 0 } }),
    maintenance: new MaintenanceCache(base),
    prober: createDaemonProber({
      timeoutMs: config.probes.httpTimeoutMs,
      maxBodyBytes: config.probes.maxBodyBytes,
      log: base.log,
      credential: async () => undefined,
    }),
  };
  return {
    ctx,
    dataDir: dir,
    async close(keep = false) {
      await ctx.prober.close();
      await store.close();
      if (!keep) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Inserts resources directly (intervals below the API's 10 s minimum keep the tests short). */
export async function insertResources(
  ctx: Pick<DaemonContext, 'db'>,
  rows: Array<{ target: string; type?: string; interval?: number; active?: boolean; nextRunAt?: number | null }>,
): Promise<number[]> {
  const now = Date.now();
  const ids: number[] = [];
  for (const [i, r] of rows.entries()) {
    const row = await ctx.db
      .insertInto('resources')
      .values({
        name: `r-${now}-${i}-${Math.random()}`,
        resource_type: r.type ?? 'HTTP',
        target: r.target,
        skip_tls: 0,
        recursive: 0,
        active: r.active === false ? 0 : 1,
        interval_seconds: r.interval ?? 60,
        created_at: now,
        updated_at: now,
        next_run_at: r.nextRunAt ?? null,
        current_status: 'unknown',
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    ids.push(row.id);
  }
  return ids;
}
