import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { subscribe } from '../tunnel/helpers.ts';
import { startNtfyReceiver, startReceiver, startSlackReceiver, startWebhookReceiver } from '../notifiers/receivers.ts';
import { type AlertWorld, eventually, itemsOf, settled, sleep, startAlertWorld } from './world.ts';

/**
 * Alerts end to end through a real daemon and real receivers: debouncing by
 * thresholds, one DOWN and one UP per incident, reminders, grouping of many
 * alerts into one message per notifier, retries that deliver once, and a
 * dead notifier that delays no one.
 */
let w: AlertWorld;
let secret = '';
let hook: Awaited<ReturnType<typeof startWebhookReceiver>>;
const closers: Array<() => Promise<void>> = [];

beforeAll(async () => {
  w = await startAlertWorld();
  hook = await startWebhookReceiver(() => secret);
  closers.push(
    () => hook.close(),
    () => w.target.close(),
    async () => {
      await w.d.stop();
    },
  );
});
afterAll(async () => {
  for (const close of closers.reverse()) await close();
});

describe('one resource, one notifier', () => {
  it('a flapping target sends nothing; three failures send one DOWN, a reminder follows, recovery sends one UP', async () => {
    const n = await w.notifier('hook', 'WEBHOOK', { url: `${hook.url}/hook` });
    secret = n.signingSecret!;
    const r = await w.resource('flappy');
    await w.rule({
      name: 'all-incidents',
      events: ['INCIDENT_OPENED', 'INCIDENT_RESOLVED'],
      notifierIds: [n.id],
      resourceIds: [r.id], // not the later tests' resources: their incidents stay open, and would be reminded
      repeatIntervalMinutes: 0.02, // 1.2 s
    });
    for (const status of [200, 503, 200, 503, 503, 200, 503, 200]) {
      w.target.status = status;
      await w.check(r.id);
    }
    await settled(w.d); // routed and dispatched: whatever the flapping opened would be here by now
    expect(hook.received.length).toBe(0);

    w.target.status = 503;
    for (let i = 0; i < 3; i++) await w.check(r.id);
    await eventually('the DOWN message', () => hook.verified.length >= 1);
    const down = itemsOf(hook.verified[0]);
    expect(down.map((i) => [i.kind, i.subject.name, i.reminder])).toEqual([['INCIDENT_OPENED', 'flappy', false]]);
    await w.check(r.id); // a fourth failure changes nothing
    await eventually('a reminder', () => hook.verified.some((p) => itemsOf(p)[0].reminder), 15_000);

    w.target.status = 200;
    await w.check(r.id);
    await eventually('the UP message', () => hook.verified.some((p) => itemsOf(p)[0].kind === 'INCIDENT_RESOLVED'));
    await settled(w.d, { reminders: true }); // reminder passes after the resolution: nothing more after it
    const kinds = hook.verified.map((p) =>
      itemsOf(p)
        .map((i) => `${i.kind}${i.reminder ? ' (reminder)' : ''}`)
        .join(),
    );
    expect(kinds.filter((k) => k === 'INCIDENT_OPENED')).toHaveLength(1);
    expect(kinds.filter((k) => k === 'INCIDENT_RESOLVED')).toHaveLength(1);
    expect(kinds.at(-1)).toBe('INCIDENT_RESOLVED');
    expect(kinds.filter((k) => k === 'INCIDENT_OPENED (reminder)').length).toBeGreaterThanOrEqual(1);
    expect(new Set(hook.received.map((x) => x.headers['webhook-id'])).size).toBe(hook.received.length);
    expect(hook.refused).toEqual([]);
  }, 60_000);
});

describe('grouping', () => {
  it('50 resources whose shared target dies within one group window reach each notifier as one message', async () => {
    const groupHook = await startWebhookReceiver(() => groupSecret);
    let groupSecret = '';
    const slack = await startSlackReceiver('/services/T1/B1/xyz');
    const ntfy = await startNtfyReceiver('tk_group', 'ops');
    closers.push(
      () => groupHook.close(),
      () => slack.close(),
      () => ntfy.close(),
    );
    const group = await w.call('POST', '/admin/api/groups', { name: 'fleet', visibility: 'PUBLIC' });
    const notifiers = [
      await w.notifier('fleet-hook', 'WEBHOOK', { url: `${groupHook.url}/hook` }),
      await w.notifier('fleet-slack', 'SLACK', { url: `${slack.url}/services/T1/B1/xyz` }),
      await w.notifier('fleet-ntfy', 'NTFY', { url: ntfy.url, topic: 'ops', token: 'tk_group' }),
    ];
    groupSecret = notifiers[0].signingSecret!;
    await w.rule({
      name: 'fleet',
      events: ['INCIDENT_OPENED'],
      notifierIds: notifiers.map((n) => n.id),
      groupIds: [group.id],
      groupWaitSeconds: 4,
    });
    w.target.status = 200;
    const ids: number[] = [];
    for (let i = 0; i < 50; i++) ids.push((await w.resource(`fleet-${i}`, { groupIds: [group.id] })).id);
    w.target.status = 503;
    for (let i = 0; i < 3; i++) await Promise.all(ids.map((id) => w.check(id))); // the default threshold: 3 failures
    await eventually('every notifier', () => groupHook.verified.length > 0 && slack.texts.length > 0 && ntfy.messages.length > 0, 20_000);
    await settled(w.d);
    expect(groupHook.verified).toHaveLength(1);
    expect(slack.texts).toHaveLength(1);
    expect(ntfy.messages).toHaveLength(1);
    expect(itemsOf(groupHook.verified[0])).toHaveLength(50);
    expect(slack.texts[0]).toMatch(/50 resources down/);
    expect(slack.texts[0]).toMatch(/and 30 more/);
    w.target.status = 200;
  }, 60_000);
});

describe('maintenance', () => {
  it('a window silences exactly its resources: the other one still alerts', async () => {
    let mSecret = '';
    const mHook = await startWebhookReceiver(() => mSecret);
    closers.push(() => mHook.close());
    const n = await w.notifier('maint-hook', 'WEBHOOK', { url: `${mHook.url}/hook` });
    mSecret = n.signingSecret!;
    const quiet = await w.resource('in-window');
    const loud = await w.resource('outside-window');
    await w.rule({
      name: 'maint',
      events: ['INCIDENT_OPENED', 'INCIDENT_RESOLVED'],
      notifierIds: [n.id],
      resourceIds: [quiet.id, loud.id],
    });
    // The daemon runs in UTC (test/helpers/daemon.ts): its wire format is UTC without an offset.
    const wire = (ms: number) => new Date(ms).toISOString().slice(0, 19);
    await w.call('POST', '/admin/api/maintenance', {
      name: 'now',
      kind: 'ONE_OFF',
      startsAt: wire(Date.now() - 60_000),
      endsAt: wire(Date.now() + 3_600_000),
      resourceIds: [quiet.id],
    });
    w.target.status = 503;
    await w.checks(quiet.id, 3);
    await w.checks(loud.id, 3);
    await eventually('the alert outside the window', () => mHook.verified.length >= 1);
    w.target.status = 200;
    await w.check(quiet.id);
    await w.check(loud.id);
    await eventually('the recovery outside the window', () => mHook.verified.length >= 2);
    await settled(w.d);
    const sent = mHook.verified.flatMap((p) => itemsOf(p).map((i) => `${i.kind} ${i.subject.name}`));
    expect(sent).toEqual(['INCIDENT_OPENED outside-window', 'INCIDENT_RESOLVED outside-window']);
    const detail = await w.call('GET', `/admin/api/resources/${quiet.id}`);
    expect(detail.inMaintenance).toBe(true);
    expect(detail.incidents[0]).toMatchObject({ maintenance: true });
  }, 30_000);
});

describe('delivery', () => {
  it('500 three times then 200: delivered once, every attempt recorded, and a dead notifier delays no one', async () => {
    let flakySecret = '';
    const flaky = await startWebhookReceiver(() => flakySecret);
    const dead = await startReceiver(() => ({ status: 0 })); // accepts, never answers
    const quick = await startSlackReceiver('/services/T2/B2/q');
    closers.push(
      () => flaky.close(),
      () => dead.close(),
      () => quick.close(),
    );
    const nFlaky = await w.notifier('flaky', 'WEBHOOK', { url: `${flaky.url}/hook` });
    flakySecret = nFlaky.signingSecret!;
    const nDead = await w.notifier('dead', 'SLACK', { url: `${dead.url}/services/T3/B3/d` });
    const nQuick = await w.notifier('quick', 'SLACK', { url: `${quick.url}/services/T2/B2/q` });
    const r = await w.resource('retried');
    await w.rule({ name: 'retried', events: ['INCIDENT_OPENED'], notifierIds: [nDead.id, nFlaky.id, nQuick.id], resourceIds: [r.id] });
    flaky.queue(500, 500, 500);
    w.target.status = 503;
    const failedAt = Date.now();
    await w.checks(r.id, 3);
    await eventually('the quick notifier', () => quick.texts.length === 1);
    // The dead notifier holds its attempt for --notifier-timeout (10 s); the quick one did not wait for it.
    expect(Date.now() - failedAt).toBeLessThan(8000);
    await eventually('the flaky notifier', () => flaky.verified.length === 1, 20_000);
    expect(flaky.received).toHaveLength(4);
    expect(new Set(flaky.received.map((x) => x.headers['webhook-id'])).size).toBe(1);
    const attempts = await w.call('GET', `/admin/api/notifiers/${nFlaky.id}/deliveries`);
    expect(attempts.map((a: { attempt: number; ok: boolean; statusCode: number }) => [a.attempt, a.ok, a.statusCode])).toEqual([
      [4, true, 204],
      [3, false, 500],
      [2, false, 500],
      [1, false, 500],
    ]);
    await sleep(1500);
    expect(flaky.verified).toHaveLength(1);
    w.target.status = 200;
  }, 60_000);

  it('a 4xx other than 408 and 429 stops the retries and publishes NOTIFICATION_FAILED', async () => {
    const refusing = await startReceiver(() => ({ status: 410 }));
    closers.push(() => refusing.close());
    const n = await w.notifier('gone', 'SLACK', { url: `${refusing.url}/services/T4/B4/g` });
    const r = await w.resource('refused');
    await w.rule({ name: 'refused', events: ['INCIDENT_OPENED'], notifierIds: [n.id], resourceIds: [r.id] });
    const stream = await subscribe(w.d, '/api/events');
    closers.push(async () => stream.close());
    w.target.status = 503;
    await w.checks(r.id, 3);
    await eventually('the failed delivery', async () => (await w.call('GET', `/admin/api/notifiers/${n.id}/deliveries`)).length === 1);
    await sleep(1500);
    expect(refusing.received).toHaveLength(1);
    await eventually('NOTIFICATION_FAILED on /api/events', () => stream.events.some((e) => e.event === 'NOTIFICATION_FAILED'));
    expect(stream.events.find((e) => e.event === 'NOTIFICATION_FAILED')!.data).toMatchObject({ notifierId: n.id, attempts: 1 });
    const metrics = await fetch(`${w.d.url}/actuator/prometheus`, { headers: { authorization: `Bearer ${w.d.adminKey}` } }).then((x) =>
      x.text(),
    );
    expect(metrics).toMatch(/monctl_notifications_total\{notifier="gone",result="failed"\} 1/);
    expect(metrics).toMatch(/monctl_outbox_pending\{stage="events"\} \d+/);
    w.target.status = 200;
  }, 30_000);
});
