import { expect, it } from 'vitest';
import { formatReport } from '../../bench/lib/soak-report.ts';
import { runSoak } from '../../bench/lib/soak.ts';

// Soak (issue 8, item 5), the short CI configuration: one real daemon checking
// thousands of resources at the shortest interval, API readers, hundreds of
// SSE subscribers and traffic through a real `monctl agent`, all at once.
// Zero unexpected errors (non-2xx, dropped subscribers, failed checks of
// healthy targets, daemon/agent error logs, a process exit), every subscriber
// still receiving at the end, bounded RSS. `npm run soak` is the long run.
// MONCTL_SOAK_SECONDS (default 45), MONCTL_SOAK_RESOURCES (2000) and
// MONCTL_SOAK_SUBSCRIBERS (200 on /api/events, plus 50 on topology and route log).

const SECONDS = Number(process.env.MONCTL_SOAK_SECONDS) || 45;
const RESOURCES = Number(process.env.MONCTL_SOAK_RESOURCES) || 2000;
const SUBSCRIBERS = Number(process.env.MONCTL_SOAK_SUBSCRIBERS) || 200;

/**
 * Memory bounds, after the warm-up (the first quarter of the run). Measured on
 * the 2-core machine with 2,000 resources and 250 subscribers:
 * - RSS (medians of the first and last quarter of the samples): the daemon ends
 *   the setup at 330–350 MB, rises in steps of 30–90 MB while V8 sizes its
 *   heap, and is flat at about 500 MB from the second minute on; the 45 s runs
 *   grew 10–70 MB. Even the whole ramp (under 170 MB) inside the window passes.
 * - Live memory (heap used + external, the lowest sample of each quarter, from
 *   the daemon's metrics): grew about 40 MB in the same runs.
 * A daemon made to keep a copy of every SSE frame it writes (a one-off check
 * with an injected leak, about 250 bytes per frame) grew 234–252 MB in RSS and
 * 270 MB in live memory within the 45 s, so the live bound catches a leak of
 * that size with a wide margin on both sides, and the RSS bound anything larger.
 * Slower leaks (bytes per check) are the long run's job: `npm run soak`.
 */
const DAEMON_RSS_GROWTH_MB = 250;
const DAEMON_LIVE_GROWTH_MB = 150;
const AGENT_RSS_GROWTH_MB = 60;

// Setup (creating the resources, connecting the subscribers) and teardown take
// well under two minutes on the loaded 2-core machine; the load phase is SECONDS.
it(
  `soak: ${RESOURCES} resources, ${SUBSCRIBERS}+ SSE subscribers, API reads and tunnel traffic for ${SECONDS} s`,
  async () => {
    const report = await runSoak({ seconds: SECONDS, resources: RESOURCES, subscribers: SUBSCRIBERS });
    console.log(formatReport(report));

    expect(report.errors.first, `${report.errors.count} unexpected errors`).toEqual([]);
    expect(report.errors.count).toBe(0);
    expect(report.sse.connected).toBe(report.sse.subscribers);
    // Each stream carried traffic (a marker frame was seen by every subscriber: part of the errors above).
    for (const [path, events] of Object.entries(report.sse.eventsByPath)) expect(events, path).toBeGreaterThan(report.sse.subscribers);
    // Work was done: a quarter of the due checks is far below what the scheduler manages, but not zero.
    expect(report.checks.done).toBeGreaterThan(report.checks.expected / 4);
    expect(report.apiReads).toBeGreaterThan(100);
    expect(report.tunnelRequests).toBeGreaterThan(100);

    expect(report.rss.daemon.steadySamples).toBeGreaterThan(4);
    expect(report.daemonLive.samples).toBeGreaterThan(4);
    expect(report.rss.daemon.growthMb, 'daemon RSS growth').toBeLessThan(DAEMON_RSS_GROWTH_MB);
    expect(report.daemonLive.growthMb, 'daemon live memory growth').toBeLessThan(DAEMON_LIVE_GROWTH_MB);
    expect(report.rss.agent.growthMb, 'agent RSS growth').toBeLessThan(AGENT_RSS_GROWTH_MB);
  },
  (SECONDS + 180) * 1000,
);
