/**
 * `npm run bench:history`: check history at scale (docs/BENCHMARKS.md#benchhistory). One store opened
 * the daemon's way (SQLite in a temp dir, or `--database postgres://…`), N resources, and a
 * simulated `--hours` of checks every `--interval` seconds written through the daemon's own
 * writer (`recordResults`, in the scheduler's batches of 200) at full speed with simulated
 * timestamps. About one check in 500 changes its resource's status. Prints:
 * - disk bytes per check (history table, its index, outcomes, hour ids) and the database size;
 * - the baseline in the same run: the same rows in the old layout (three text columns a row,
 *   three indexes), bytes per check;
 * - the rollup of every hour (time, longest statement);
 * - pruning to a budget of `--budget-share` of the history's size: the pauses (each bounded
 *   statement, p50/p99/max) and the p99 of the history endpoint's query run meanwhile;
 * - the CPU model and the load average. Figures only: nothing fails on a slow host.
 *
 *   npm run bench:history -- --resources 1000000 --hours 24 --interval 300
 *   npm run bench:history -- --quick          (20,000 resources, 3 hours)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { sql } from 'kysely';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_AGENT_GRACE_SECONDS, DEFAULT_CERT_EXPIRY_DAYS } from '../daemon/config/incident-defaults.ts';
import { MaintenanceCache } from '../daemon/alerts/maintenance/cache.ts';
import { Bus } from '../daemon/bus.ts';
import { EventHub } from '../daemon/events/channel.ts';
import { createLogger } from '../daemon/logger.ts';
import { historyPage } from '../daemon/monitoring/history.ts';
import { pruneToBudget } from '../daemon/probes/history-prune.ts';
import { yieldTurn } from '../daemon/util/yield-turn.ts';
import { recordResults, type ResultWriterDeps, type RoundRecord } from '../daemon/probes/results.ts';
import { HOUR, rolledUpUntil, runRollups } from '../daemon/probes/rollups.ts';
import { historyBytes } from '../daemon/store/dialect/history-size.ts';
import { openStore } from '../daemon/store/store.ts';
import { flag, fmt } from './lib/load.ts';
import { copyToOldLayout, dropOldLayout, OLD_INDEXES, OLD_TABLE, postgresBytes, sqliteBytes } from './lib/history-layout.ts';

const quick = process.argv.includes('--quick');
const resources = flag('resources', quick ? 20_000 : 1_000_000);
const hours = flag('hours', quick ? 3 : 24);
const interval = flag('interval', 300);
const budgetShare = flag('budget-share', 0.5);
const batch = 200;
const dbFlag = process.argv.indexOf('--database');
const databaseUrl = dbFlag > 0 ? process.argv[dbFlag + 1] : undefined;

const cpu = `${cpus()[0]?.model ?? 'unknown'} (${cpus().length} cores)`;
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
const pct = (values: number[], p: number) => {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
};
const mib = (bytes: number) => `${fmt(bytes / 2 ** 20)} MiB`;

console.log(`bench:history: ${resources.toLocaleString('en-US')} resources, ${hours} h of checks every ${interval} s`);
console.log(`CPU: ${cpu}; load average at start ${load()}`);
const dir = mkdtempSync(join(tmpdir(), 'monctl-bench-history-'));
const store = await openStore(dir, databaseUrl);
const db = store.db;
const postgres = store.dialect === 'postgres';
// An experiment: without automatic WAL checkpoints, which pauses are the checkpoints' own.
if (process.argv.includes('--no-autocheckpoint') && !postgres) await sql`PRAGMA wal_autocheckpoint = 0`.execute(db);
const base = { db, bus: new Bus(), log: createLogger('silent') };
const ctx: ResultWriterDeps = {
  ...base,
  events: new EventHub(),
  maintenance: new MaintenanceCache(base),
  config: { incidents: { agentGraceSeconds: DEFAULT_AGENT_GRACE_SECONDS, certExpiryDays: [...DEFAULT_CERT_EXPIRY_DAYS] } },
};

try {
  let t = performance.now();
  const now = Date.now();
  for (let i = 0; i < resources; i += 500) {
    const rows = Array.from({ length: Math.min(500, resources - i) }, (_, k) => ({
      name: `r${i + k}`,
      resource_type: 'HTTP',
      target: `http://127.0.0.1:9/${i + k}`,
      interval_seconds: interval,
      active: 1,
      skip_tls: 0,
      recursive: 0,
      current_status: 'unknown',
      created_at: now,
      updated_at: now,
    }));
    await db.insertInto('resources').values(rows).execute();
  }
  const ids = (await db.selectFrom('resources').select('id').orderBy('id').execute()).map((r) => Number(r.id));
  console.log(`resources inserted: ${fmt((performance.now() - t) / 1000)} s`);

  // Simulated time: the hours before the current one, so that every hour is complete and rolls up.
  const start = Math.floor(now / HOUR) * HOUR - hours * HOUR;
  const rounds = Math.floor((hours * 3600) / interval);
  const up = new Uint8Array(resources).fill(1);
  let seed = 42;
  const random = () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
  let checks = 0;
  t = performance.now();
  let hourMark = performance.now();
  for (let r = 0; r < rounds; r++) {
    const roundStart = start + r * interval * 1000;
    for (let i = 0; i < resources; i += batch) {
      const items: RoundRecord[] = [];
      for (let k = i; k < Math.min(i + batch, resources); k++) {
        if (random() < 0.002) up[k] ^= 1;
        items.push({
          resourceId: ids[k],
          result: {
            status: up[k] ? 'AVAILABLE' : 'NOT_AVAILABLE',
            message: up[k] ? '200 OK' : '503 Service Unavailable',
            errorCode: up[k] ? null : '503',
            durationMs: 20 + ((k * 7 + r * 13) % 200),
            checkedAt: roundStart + Math.floor((k / resources) * interval * 1000),
          },
        });
      }
      await recordResults(ctx, items);
      checks += items.length;
    }
    if ((r + 1) % Math.max(1, Math.round(3600 / interval)) === 0) {
      const s = (performance.now() - hourMark) / 1000;
      console.log(
        `  simulated hour ${Math.round(((r + 1) * interval) / 3600)}: ${fmt(s)} s, ${fmt(((3600 / interval) * resources) / s, 0)} checks/s; load ${load()}`,
      );
      hourMark = performance.now();
    }
  }
  const writeSeconds = (performance.now() - t) / 1000;
  console.log(
    `checks written: ${checks.toLocaleString('en-US')} in ${fmt(writeSeconds)} s (${fmt(checks / writeSeconds, 0)} checks/s, history writes, latest columns and incidents)`,
  );

  const newNames = ['check_history', 'check_history_resource', 'check_outcomes', 'check_details', 'history_hours'];
  const newBytes = postgres
    ? await postgresBytes(db, ['check_history', 'check_outcomes', 'check_details', 'history_hours'])
    : await sqliteBytes(db, [...newNames, 'sqlite_autoindex_check_outcomes_1', 'sqlite_autoindex_history_hours_1']);
  const dbBytes = await historyBytes(db);
  console.log(`new layout: ${mib(newBytes)} of history, ${fmt(newBytes / checks)} bytes per check; database ${mib(dbBytes)} in use`);

  t = performance.now();
  await copyToOldLayout(db, postgres);
  const oldBytes = postgres ? await postgresBytes(db, [OLD_TABLE]) : await sqliteBytes(db, [OLD_TABLE, ...OLD_INDEXES]);
  console.log(
    `baseline, old layout (same rows, 3 indexes): ${mib(oldBytes)}, ${fmt(oldBytes / checks)} bytes per check; new/old = ${fmt(newBytes / oldBytes, 3)} (copied in ${fmt((performance.now() - t) / 1000)} s)`,
  );
  await dropOldLayout(db);

  t = performance.now();
  let rolled = 0;
  for (;;) {
    const r = await runRollups(db, 30, now);
    rolled += r.hours;
    if (r.hours === 0) break;
  }
  console.log(
    `rollups: ${rolled} hours in ${fmt((performance.now() - t) / 1000)} s (${fmt((performance.now() - t) / Math.max(1, rolled), 0)} ms an hour)`,
  );

  const before = await historyBytes(db);
  const budget = Math.floor(before * budgetShare);
  const pauses: number[] = [];
  const reads: number[] = [];
  let pruning = true;
  const reader = (async () => {
    while (pruning) {
      const started = performance.now();
      await historyPage(db, ids[Math.floor(random() * ids.length)], undefined, 51);
      reads.push(performance.now() - started);
      await yieldTurn();
    }
  })();
  t = performance.now();
  const thinned = await pruneToBudget(db, budget, await rolledUpUntil(db), (ms) => pauses.push(ms));
  pruning = false;
  await reader;
  const after = await historyBytes(db);
  console.log(
    `pruning to a budget of ${mib(budget)} (${budgetShare} of ${mib(before)}): ${thinned.toLocaleString('en-US')} checks deleted in ${fmt((performance.now() - t) / 1000)} s, ${mib(after)} in use after`,
  );
  console.log(
    `  pauses (one bounded DELETE each, ${pauses.length}): p50 ${fmt(pct(pauses, 50), 2)} ms, p99 ${fmt(pct(pauses, 99), 2)} ms, max ${fmt(Math.max(...pauses), 2)} ms`,
  );
  console.log(
    `  history reads meanwhile (${reads.length}, a page of 50): p50 ${fmt(pct(reads, 50), 2)} ms, p99 ${fmt(pct(reads, 99), 2)} ms`,
  );
  const perDay = (newBytes / checks) * resources * (86_400 / interval);
  console.log(`extrapolated: ${mib(perDay)} a day of raw history at ${resources.toLocaleString('en-US')} resources every ${interval} s`);
  console.log(`load average at end ${load()}`);
} finally {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
}
