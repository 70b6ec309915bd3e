import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { httpResource, type Target, target, until } from '../alerts/helpers.ts';
import type { TestDaemon } from '../helpers/daemon.ts';
import { type Pods, startPods } from './pods.ts';
import { shedOut, waitingOut } from './relay-metrics.ts';
import { stream } from './sse-stream.ts';

const MAX_BYTES = 3_000;
const RESOURCES = 40;

/**
 * The outgoing bound in bytes (--pod-events-max-bytes): with the count bound
 * far away (10,000), a pod whose announcements are stalled (a row lock on
 * `event_channels` held by another client) keeps only as many status changes
 * as fit the bytes, and sheds the rest.
 */
describe("the event relay's byte bound", () => {
  let cluster: Pods;
  let t: Target;
  let a: TestDaemon;
  let locker: pg.Client;
  const ids: number[] = [];

  beforeAll(async () => {
    t = await target();
    cluster = await startPods(1, { args: ['--scheduler', 'off', '--pod-events-max-bytes', String(MAX_BYTES)] });
    a = cluster.pod('pod-a');
    for (let i = 0; i < RESOURCES; i++) ids.push(await httpResource(a, `r-${i}`, `${t.url}/${i}`));
    locker = new pg.Client({ connectionString: cluster.url });
    await locker.connect();
  }, 60_000);
  afterAll(async () => {
    await locker?.query('ROLLBACK').catch(() => {});
    await locker?.end();
    await cluster?.stop();
    await t?.close();
  });

  it('keeps no more event JSON waiting than --pod-events-max-bytes, and sheds the rest', async () => {
    const watch = stream(a.url, '/api/events', a.adminKey);
    await until(() => watch.kinds().includes('SNAPSHOT'));
    await locker.query('BEGIN');
    await locker.query(`SELECT seq FROM event_channels WHERE name = 'monitoring' FOR UPDATE`);
    let most = 0;
    try {
      for (const id of ids) {
        await a.admin.call(operations.updateResource, { params: { id }, body: { active: false } });
        most = Math.max(most, await waitingOut(a));
      }
    } finally {
      await locker.query('ROLLBACK');
    }
    expect(most).toBeLessThan(RESOURCES);
    expect(await shedOut(a, 'full')).toBe(RESOURCES - most);
    // What waited is announced, then the restart marker ends the stream (frames not yet written go with it).
    await until(() => watch.ended);
    const first = watch.events.find((e) => e.event === 'STATUS_CHANGED')!.data;
    expect(first.resourceId).toBe(ids[0]);
    // The newest were shed: the first `most` updates were kept. Their events as the relay serialises them:
    const size = (i: number) => Buffer.byteLength(JSON.stringify(['STATUS_CHANGED', { ...first, resourceId: ids[i], name: `r-${i}` }]));
    const kept = ids.slice(0, most).reduce((n, _, i) => n + size(i), 0);
    expect(most).toBeGreaterThan(1);
    expect(kept).toBeLessThanOrEqual(MAX_BYTES);
    expect(kept + size(most)).toBeGreaterThan(MAX_BYTES);
  }, 60_000);
});
