import type { DaemonContext } from '../context.ts';
import { markRoute } from '../http/app.ts';
import type { DaemonModule } from '../module.ts';
import { createDeadlineMetrics } from './deadline-metrics.ts';
import { countLate } from './deadline-store.ts';
import { DeadlineJudge } from './deadlines.ts';
import { pingBodyHandlers } from './ping-body-op.ts';
import { pingMetrics, pingRoute } from './ping-route.ts';
import { PingWriter } from './ping-writer.ts';
import { RateLimiter } from './rate-limit.ts';

/** Client addresses and checks whose rate buckets are kept; past it the least recently used goes. */
const MAX_BUCKETS = 100_000;
/** Pings waiting for their batch at most (and their bodies' bytes): past it, 503 with Retry-After. */
const MAX_QUEUED = 20_000;
const MAX_QUEUED_BYTES = 64 * 1024 * 1024;
const MAX_BATCH = 1_000;

/**
 * The push capability (docs/API.md#push-checks): the ping endpoints on the API and edge
 * listeners, and the deadline judge that marks a silent check MISSED_PING. Resources of type
 * PUSH are created and edited through the monitoring API like any other; the probe scheduler
 * leaves them alone.
 */
export function pushModule(ctx: DaemonContext): DaemonModule {
  const lateCount = () =>
    countLate(ctx.db).catch((err) => {
      ctx.log.debug({ err }, 'push late gauge not collected'); // a scrape during shutdown finds the database closed
      return undefined;
    });
  const judge = new DeadlineJudge(ctx, createDeadlineMetrics(ctx.metrics.registry, lateCount));
  const writer = new PingWriter(ctx, {
    maxQueued: MAX_QUEUED,
    maxQueuedBytes: MAX_QUEUED_BYTES,
    maxBatch: MAX_BATCH,
    perCheck: new RateLimiter(ctx.config.pings.perCheck, MAX_BUCKETS),
  });
  const ping = pingRoute({
    ctx,
    writer,
    perAddress: new RateLimiter(ctx.config.pings.perAddress, MAX_BUCKETS),
    metrics: pingMetrics(ctx.metrics.registry),
  });
  return {
    name: 'push',
    handlers: pingBodyHandlers(ctx),
    middleware: [
      (req, res, next) => {
        if (ping(req, res)) markRoute(req, '/ping/{…}');
        else next();
      },
    ],
    // Every host of the edge: the ping paths are monctl's there, before status pages and routes.
    edgeFront: ping,
    start: () => judge.start(),
    async stop() {
      await writer.drain(); // the pings in flight are recorded first
      await judge.stop(); // before monitoring and the store: nothing is recorded after it
    },
  };
}
