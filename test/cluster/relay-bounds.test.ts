import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { httpResource, type Target, target, until } from '../alerts/helpers.ts';
import type { TestDaemon } from '../helpers/daemon.ts';
import { type Pods, startPods } from './pods.ts';
import { shedIn, shedOut, waitingIn, waitingOut } from './relay-metrics.ts';
import { stream } from './sse-stream.ts';

const CAP = 50;
const RESOURCES = 40;

/**
 * The pods' event relay is bounded (issue 18; daemon/cluster/event-announcer.ts):
 * announcements block on a row lock of `event_channels` held by another
 * client (a stalled database, for that statement), while pod A publishes.
 * What waits never passes --pod-events-max, the excess is shed, and once the
 * database takes announcements again every pod restarts the channel: a
 * subscriber on pod B is ended and reconnects to a SNAPSHOT of the latest state.
 */
describe('the event relay under a stalled database', () => {
  let cluster: Pods;
  let t: Target;
  let a: TestDaemon;
  let b: TestDaemon;
  let locker: pg.Client;
  /** Outside any transaction: pg_stat_activity is read once per transaction. */
  let watcher: pg.Client;
  const ids: number[] = [];

  beforeAll(async () => {
    t = await target();
    cluster = await startPods(2, { args: ['--scheduler', 'off', '--pod-events-max', String(CAP)] });
    [a, b] = [cluster.pod('pod-a'), cluster.pod('pod-b')];
    for (let i = 0; i < RESOURCES; i++) ids.push(await httpResource(a, `r-${i}`, `${t.url}/${i}`));
    locker = new pg.Client({ connectionString: cluster.url });
    await locker.connect();
    watcher = new pg.Client({ connectionString: cluster.url });
    await watcher.connect();
  }, 60_000);
  afterAll(async () => {
    await locker?.query('ROLLBACK').catch(() => {});
    await locker?.end();
    await watcher?.end();
    await cluster?.stop();
    await t?.close();
  });

  /** Holds the monitoring channel's row: every pod's announcement on it blocks until release. */
  const stall = async () => {
    await locker.query('BEGIN');
    await locker.query(`SELECT seq FROM event_channels WHERE name = 'monitoring' FOR UPDATE`);
  };
  const release = () => locker.query('ROLLBACK');
  /** Backends of the test's database waiting on a lock, running a statement that contains `text`. */
  const lockWaits = async (text: string) =>
    (
      await watcher.query(
        `SELECT pid FROM pg_stat_activity
    WHERE datname = $1 AND wait_event_type = 'Lock' AND query LIKE $2`,
        [new URL(cluster.url).pathname.slice(1), `%${text}%`],
      )
    ).rows;
  const setActive = (id: number, active: boolean) => a.admin.call(operations.updateResource, { params: { id }, body: { active } });

  /** Pod B's subscriber is ended, and a reconnection (Last-Event-ID included) gets a SNAPSHOT of the database's state. */
  async function expectRestartOnB(onB: ReturnType<typeof stream>, status: (id: number) => 'inactive' | 'unknown') {
    await until(() => onB.ended);
    const last = onB.events.at(-1)!.id;
    const again = stream(b.url, '/api/events', b.adminKey, last);
    try {
      await until(() => again.kinds().includes('SNAPSHOT'));
      const snapshot = again.events.find((e) => e.event === 'SNAPSHOT')!.data;
      const shown = new Map(snapshot.resources.map((r: { resourceId: number; currentStatus: string }) => [r.resourceId, r.currentStatus]));
      expect(ids.map((id) => shown.get(id))).toEqual(ids.map(status));
    } finally {
      await again.close();
    }
  }

  it('sheds past --pod-events-max, and restarts the channel on every pod once the database is back', async () => {
    const onB = stream(b.url, '/api/events', b.adminKey);
    await until(() => onB.kinds().includes('SNAPSHOT'));
    expect(await shedOut(a, 'full')).toBe(0);

    await stall();
    let most = 0;
    try {
      // 120 status changes on pod A; its first announcement waits on the lock, the rest queue behind it.
      for (const active of [false, true, false]) {
        for (const id of ids) {
          await setActive(id, active);
          const waiting = await waitingOut(a);
          expect(waiting).toBeLessThanOrEqual(CAP);
          most = Math.max(most, waiting);
        }
      }
      expect(most).toBe(CAP);
      expect(await shedOut(a, 'full')).toBeGreaterThanOrEqual(3 * RESOURCES - CAP);
      expect(onB.ended).toBe(false);
    } finally {
      await release();
    }

    // The last deactivations were shed: B learns the state from the SNAPSHOT of its reconnection.
    await expectRestartOnB(onB, () => 'inactive');
    await until(async () => (await waitingOut(a)) === 0);
    expect(a.logs.filter((l) => String(l.msg).startsWith('events for the pods are being lost'))).toHaveLength(1);
  }, 120_000);

  it('an announcement that fails is not lost silently: the channel restarts on every pod', async () => {
    const onB = stream(b.url, '/api/events', b.adminKey);
    await until(() => onB.kinds().includes('SNAPSHOT'));
    await stall();
    try {
      for (const id of ids.slice(0, 5)) await setActive(id, true);
      // Pod A's announcement waits on the lock; it is cancelled, as a statement the server gave up on would be.
      const waiting = await until(async () => {
        const rows = await lockWaits('event_channels');
        return rows.length > 0 && rows;
      });
      for (const { pid } of waiting) await watcher.query('SELECT pg_cancel_backend($1)', [pid]);
      await until(async () => (await shedOut(a, 'failed')) >= 1);
      expect(await shedOut(a, 'failed')).toBeLessThanOrEqual(5);
    } finally {
      await release();
    }
    // Nothing else is published: only the restart marker tells B that it missed those events.
    await expectRestartOnB(onB, (id) => (ids.indexOf(id) < 5 ? 'unknown' : 'inactive'));
  }, 120_000);

  /**
   * Creates a route through pod A whose event is too large for a notification (spilled: stored, its id
   * announced, read by every pod) and returns a client holding an exclusive lock on event_spill, taken
   * before any pod could read it: the spilled announcement holds event_spill (it inserts) while it waits
   * on the topology row, and the exclusive lock asked meanwhile is granted as it commits.
   */
  async function stallSpilledReads(name: string): Promise<pg.Client> {
    const agent = await a.admin.call(operations.createAgent, { body: { name: `agent-${name}` } });
    const ipAllow = Array.from({ length: 500 }, (_, i) => `10.1.${i >> 8}.${i & 255}/32`);
    const spill = new pg.Client({ connectionString: cluster.url });
    await spill.connect();
    try {
      await locker.query('BEGIN');
      await locker.query(`SELECT seq FROM event_channels WHERE name = 'topology' FOR UPDATE`);
      await a.admin.call(operations.createRoute, {
        body: { name, type: 'HTTP', agentId: agent.id, target: t.url, hostname: `${name}.test`, ipAllow },
      });
      await until(async () => (await lockWaits('event_spill')).length > 0);
      await spill.query('BEGIN');
      const exclusive = spill.query('LOCK TABLE event_spill IN ACCESS EXCLUSIVE MODE');
      await until(async () => (await lockWaits('LOCK TABLE event_spill')).length > 0);
      await locker.query('ROLLBACK');
      await exclusive;
      // Both pods now wait to read the spilled events.
      await until(async () => (await lockWaits('"event_spill"')).length >= 2);
      return spill;
    } catch (err) {
      await locker.query('ROLLBACK').catch(() => {});
      await spill.end();
      throw err;
    }
  }

  it('drops the arrivals piling up behind a slow read of spilled events past --pod-events-max, and resyncs', async () => {
    const onB = stream(b.url, '/api/events', b.adminKey);
    await until(() => onB.kinds().includes('SNAPSHOT'));
    // The counter and the log are the pod's since it started: on a loaded machine the earlier tests'
    // bursts can already have filled pod B's inbound queue. This test counts its own.
    const shedBefore = await shedIn(b, 'full');
    const logsBefore = b.logs.length;
    const spill = await stallSpilledReads('wide');
    try {
      // Pod A's status changes arrive behind the spilled events.
      expect(await shedIn(b, 'full')).toBe(shedBefore);
      for (const active of [true, false, true]) {
        for (const id of ids) {
          await setActive(id, active);
          expect(await waitingIn(b)).toBeLessThanOrEqual(CAP);
        }
      }
      await until(async () => (await shedIn(b, 'full')) > shedBefore);
      expect(await waitingIn(b)).toBeLessThanOrEqual(CAP);
      expect(onB.ended).toBe(false);
    } finally {
      await spill.query('ROLLBACK').catch(() => {});
      await spill.end();
    }
    await expectRestartOnB(onB, () => 'unknown');
    await until(async () => (await waitingIn(b)) === 0);
    expect(b.logs.slice(logsBefore).filter((l) => String(l.msg).startsWith('events from the pods arrive faster'))).toHaveLength(1);
  }, 120_000);

  it('spilled events that cannot be read restart their channel', async () => {
    const onB = stream(b.url, '/admin/sse/topology', b.adminKey);
    await until(() => onB.kinds().includes('SNAPSHOT'));
    const failed = () => shedIn(b, 'failed');
    expect(await failed()).toBe(0);
    const spill = await stallSpilledReads('gone');
    try {
      // Gone before any pod read them (as after the sweep of old spilled events).
      await spill.query('DELETE FROM event_spill');
      await spill.query('COMMIT');
    } finally {
      await spill.end();
    }
    await until(() => onB.ended);
    expect(onB.kinds()).not.toContain('ROUTE_CREATED');
    expect(await failed()).toBe(1);
    const again = stream(b.url, '/admin/sse/topology', b.adminKey, onB.events.at(-1)!.id);
    try {
      await until(() => again.kinds().includes('SNAPSHOT'));
      expect(again.events[0].data.routes.map((r: { name: string }) => r.name)).toContain('gone');
    } finally {
      await again.close();
    }
  }, 120_000);
});
