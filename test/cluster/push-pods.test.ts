import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, itemsOf, worldOf } from '../alerts/world.ts';
import type { TestDaemon } from '../helpers/daemon.ts';
import { moveClock, TEST_CLOCK_ARGS } from '../helpers/test-clock.ts';
import { startWebhookReceiver } from '../notifiers/receivers.ts';
import { lateAt, metric, missedEntries, pushResource, pushRow, until } from '../push/deadline-helpers.ts';
import { type Pods, startPods } from './pods.ts';

/**
 * Push deadlines across pods on one PostgreSQL database (docs/DECISIONS.md#push-deadlines):
 * every pod holds every deadline, and the conditional update that claims one decides which pod
 * records it. Each pod has its own test clock, so the test decides which pods see a deadline
 * pass. A real Standard Webhooks receiver counts the alerts (failureThreshold 1: one miss opens
 * an incident).
 */
describe('push deadlines across pods', () => {
  let cluster: Pods;
  let a: TestDaemon;
  let b: TestDaemon;
  let secret = '';
  let hook: Awaited<ReturnType<typeof startWebhookReceiver>>;

  beforeAll(async () => {
    hook = await startWebhookReceiver(() => secret);
    cluster = await startPods(2, { args: [...TEST_CLOCK_ARGS, '--notifier-retry-base', '200ms'] });
    [a, b] = cluster.pods;
    const w = worldOf(a, null as never);
    const n = await w.notifier('hook', 'WEBHOOK', { url: `${hook.url}/hook` });
    secret = n.signingSecret!;
    await w.rule({ name: 'push', events: ['INCIDENT_OPENED'], notifierIds: [n.id] });
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
    await hook?.close();
  });

  const openings = (name: string) =>
    hook.verified.flatMap(itemsOf).filter((i) => i.kind === 'INCIDENT_OPENED' && i.subject.name === name).length;
  const missedTotal = async (pods: TestDaemon[]) => {
    let total = 0;
    for (const pod of pods) total += await metric(pod, 'monctl_push_missed_total');
    return total;
  };

  it('both pods past a deadline: it is recorded once, and alerts once', async () => {
    const id = await pushResource(a, 'race', { periodSeconds: 3600, graceSeconds: 60 });
    const late = await lateAt(a, id);
    await Promise.all([moveClock(a, { at: late }), moveClock(b, { at: late })]);
    await until('the missed deadline', async () => (await missedEntries(a, id)).length > 0);
    // Both pods found it due at the same jump; by the time the alert is out, both have tried.
    await eventually('the alert', () => openings('race') === 1);
    expect((await pushRow(a, id)).lateAt).toBeNull();
    expect(await missedEntries(a, id)).toHaveLength(1);
    expect(await missedTotal([a, b])).toBe(1);
  });

  it('pings at pod A move the deadline that pod B judges; B records the miss once, with A stopped', async () => {
    const id = await pushResource(a, 'nightly', { periodSeconds: 3600, graceSeconds: 60 });
    const first = await lateAt(a, id);
    // A check whose deadline falls between the first and the moved one: once B judged it, B was past the first.
    const probe = await pushResource(a, 'probe', { periodSeconds: 3600, graceSeconds: 120 });
    // A's clock half an hour on, then a ping at A: the deadline moves past the first one.
    await moveClock(a, { advanceSeconds: 1800 });
    const { uuid } = await pushRow(a, id);
    const ping = await fetch(`${a.url}/ping/${uuid}`, { method: 'POST', body: 'backup done' });
    expect(ping.status).toBe(200);
    const moved = await until('the ping recorded', async () => {
      const { lateAt: now } = await pushRow(a, id);
      return now !== null && now > first ? now : undefined;
    });
    expect(await a.stop()).toBe(0);

    const before = await metric(b, 'monctl_push_missed_total');
    const probeLate = await lateAt(b, probe);
    expect(probeLate).toBeGreaterThan(first);
    expect(probeLate).toBeLessThan(moved);
    await moveClock(b, { at: probeLate + 1000 });
    await until('the probe judged by B', async () => (await missedEntries(b, probe)).length === 1);
    expect(await missedEntries(b, id)).toEqual([]); // A's ping counted at B

    await moveClock(b, { at: moved });
    const entry = await until('the moved deadline judged by B', async () => (await missedEntries(b, id))[0]);
    expect(entry.message).toMatch(/^no ping since \S+Z; expected by \S+Z plus 1m grace$/);
    expect(await metric(b, 'monctl_push_missed_total')).toBe(before + 2);
    await eventually('the alert', () => openings('nightly') === 1);
    expect(await missedEntries(b, id)).toHaveLength(1);
  }, 60_000);
});
