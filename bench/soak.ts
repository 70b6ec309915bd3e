/**
 * `npm run soak`: the long soak run of issue 8 (item 5), the same driver as
 * test/reliability/soak.test.ts with bigger figures. Prints progress every
 * 10 s, then the report (checks, API reads, SSE events, tunnel requests, RSS
 * min/max/slope of the daemon and the agent after the warm-up, every error).
 * Exits 1 when there was any unexpected error.
 *
 *   npm run soak -- --seconds 600 --resources 5000 --subscribers 300
 *
 * Flags: --seconds (default 180), --resources (2000), --subscribers (200 on
 * /api/events; a fifth as many more on the topology, a twentieth on a route log),
 * --readers (4 API clients), --tunnel-clients (4), --warmup (0.25 of the run).
 */
import { flag } from './lib/load.ts';
import { formatReport } from './lib/soak-report.ts';
import { runSoak } from './lib/soak.ts';

for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(1));

const started = Date.now();
const log = (line: string) => console.log(`[${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${line}`);
const report = await runSoak({
  seconds: flag('seconds', 180),
  resources: flag('resources', 2000),
  subscribers: flag('subscribers', 200),
  readers: flag('readers', 4),
  tunnelClients: flag('tunnel-clients', 4),
  warmup: flag('warmup', 0.25),
  progress: log,
});
console.log(`\n${formatReport(report)}`);
process.exitCode = report.errors.count === 0 ? 0 : 1;
