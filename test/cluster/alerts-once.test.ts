import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHANNEL_TYPES, channelConfig, startChannelReceiver } from '../helpers/channel-receiver.ts';
import { queryDb } from '../helpers/test-database.ts';
import { startWebhookReceiver } from '../notifiers/receivers.ts';
import { eventually, itemsOf, settled, startTarget, type WebhookItem, worldOf } from '../alerts/world.ts';
import { type Pods, startPods } from './pods.ts';

const RESOURCES = 64;

/**
 * Alerts exactly once across pods (issue 18): 3 pods on one PostgreSQL
 * database all route the outbox and dispatch notifications at once. 64
 * resources (one in each of the 64 shards the pods share) go down and come back: a real
 * Standard Webhooks receiver gets each incident's opening and its
 * resolution exactly once, and every notification took one attempt. The
 * nine channel types of their own module are routed the same alerts: each
 * sends one request per message (PAGERDUTY and OPSGENIE one per alert, each
 * incident triggered and resolved once).
 */
describe('alerts across pods', () => {
  let cluster: Pods;
  let target: Awaited<ReturnType<typeof startTarget>>;
  let secret = '';
  let hook: Awaited<ReturnType<typeof startWebhookReceiver>>;
  let channels: Awaited<ReturnType<typeof startChannelReceiver>>;

  beforeAll(async () => {
    target = await startTarget();
    target.status = 503;
    hook = await startWebhookReceiver(() => secret);
    channels = await startChannelReceiver();
    // The default alert tick (1 s): three pods polling one database every 100 ms is load this file
    // does not need (the wake-ups send at once; a settled wait is two routing passes).
    cluster = await startPods(3, { args: ['--notifier-retry-base', '200ms'] });
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
    await hook?.close();
    await channels?.close();
    await target?.close();
  });

  const items = (kind: string): WebhookItem[] => hook.verified.flatMap(itemsOf).filter((i) => i.kind === kind);
  const perIncident = (kind: string) => {
    const counts = new Map<number, number>();
    for (const i of items(kind)) counts.set(i.incidentId!, (counts.get(i.incidentId!) ?? 0) + 1);
    return counts;
  };

  it('each opening and each resolution reaches the receiver once, whichever pod checked, routed and sent it', async () => {
    // Every pod holds its share of the shards before the resources come.
    await eventually(
      'shares',
      async () =>
        (await queryDb<{ shards: number }>(cluster.pod('pod-a'), 'SELECT shards FROM cluster_members')).filter(
          (m) => Number(m.shards) >= 20,
        ).length === 3,
      30_000,
    );
    const w = worldOf(cluster.pod('pod-a'), target);
    const n = await w.notifier('hook', 'WEBHOOK', { url: `${hook.url}/hook` });
    secret = n.signingSecret!;
    const others: number[] = [];
    for (const type of CHANNEL_TYPES) others.push((await w.notifier(type.toLowerCase(), type, channelConfig(type, channels.url))).id);
    await w.rule({ name: 'all', events: ['INCIDENT_OPENED', 'INCIDENT_RESOLVED'], notifierIds: [n.id, ...others] });
    // Created through every pod; 64 consecutive ids fill the 64 shards (id % 64), so every pod checks some.
    for (let i = 0; i < RESOURCES; i++) {
      await worldOf(cluster.pods[i % 3], target).resource(`r-${i}`, { intervalSeconds: 10, failureThreshold: 1 });
    }

    await eventually('every opening', () => perIncident('INCIDENT_OPENED').size === RESOURCES, 45_000);
    // Nothing left to send, and more routing and dispatch passes on every pod: a second send would show now.
    await settled(cluster.pods);
    const opened = perIncident('INCIDENT_OPENED');
    expect(
      [...opened.values()].filter((c) => c !== 1),
      'openings sent more than once',
    ).toEqual([]);
    // (The members' counters are written with their heartbeats, every 2 s.)
    await eventually(
      'every pod checked some of the resources',
      async () =>
        (await queryDb<{ checks_total: number }>(cluster.pod('pod-a'), 'SELECT checks_total FROM cluster_members')).filter(
          (m) => Number(m.checks_total) > 0,
        ).length === 3,
    );

    target.status = 200;
    await eventually('every resolution', () => perIncident('INCIDENT_RESOLVED').size === RESOURCES, 45_000);
    await settled(cluster.pods);
    const resolved = perIncident('INCIDENT_RESOLVED');
    expect([...resolved.keys()].sort()).toEqual([...opened.keys()].sort());
    expect(
      [...resolved.values()].filter((c) => c !== 1),
      'resolutions sent more than once',
    ).toEqual([]);
    expect(hook.refused).toEqual([]);

    // The database agrees: every message went out in one attempt, once.
    const rows = await queryDb<{ state: string; attempts: number; message_id: string; notifier_id: number }>(
      cluster.pod('pod-a'),
      'SELECT state, attempts, message_id, notifier_id FROM notifications',
    );
    expect(
      rows.every((r) => r.state === 'sent' && Number(r.attempts) === 1),
      JSON.stringify(rows.filter((r) => r.state !== 'sent' || Number(r.attempts) !== 1)),
    ).toBe(true);
    const ids = hook.received.map((r) => r.headers['webhook-id']);
    expect(new Set(ids).size, 'a message id delivered twice').toBe(ids.length);
    expect(ids.length).toBe(rows.filter((r) => Number(r.notifier_id) === n.id).length);

    // Every channel type: one request per message it was routed (pagers: one per alert), no more.
    const routed = await queryDb<{ notifier_id: number; messages: number; items: number }>(
      cluster.pod('pod-a'),
      'SELECT n.notifier_id, count(DISTINCT n.id) AS messages, count(*) AS items FROM notifications n JOIN notification_items i ON i.notification_id = n.id GROUP BY n.notifier_id',
    );
    CHANNEL_TYPES.forEach((type, t) => {
      const mine = routed.find((r) => Number(r.notifier_id) === others[t])!;
      const expected = type === 'PAGERDUTY' || type === 'OPSGENIE' ? Number(mine.items) : Number(mine.messages);
      expect(channels.requests.filter((r) => r.type === type).length, type).toBe(expected);
    });
    const pagerKeys = (action: string) =>
      channels.requests
        .filter((r) => r.type === 'PAGERDUTY')
        .map((r) => JSON.parse(r.body))
        .filter((e) => e.event_action === action)
        .map((e) => Number(e.dedup_key));
    for (const action of ['trigger', 'resolve']) expect(pagerKeys(action).sort(), action).toEqual([...opened.keys()].sort());
    const closed = channels.requests
      .filter((r) => r.type === 'OPSGENIE' && r.path.includes('/close'))
      .map((r) => Number(r.path.split('/')[4]));
    expect(closed.sort()).toEqual([...opened.keys()].sort());
  }, 150_000);

  it('a rule created on one pod while incidents are open notifies each of them once, whichever pods route (issue 25)', async () => {
    let lateSecret = '';
    const late = await startWebhookReceiver(() => lateSecret);
    try {
      target.status = 503;
      await eventually(
        'every resource down again',
        async () =>
          (await queryDb<{ n: number }>(cluster.pod('pod-a'), 'SELECT count(*) AS n FROM incidents WHERE resolved_at IS NULL')).every(
            (r) => Number(r.n) === RESOURCES,
          ),
        45_000,
      );
      const w = worldOf(cluster.pod('pod-b'), target);
      const n = await w.notifier('late', 'WEBHOOK', { url: `${late.url}/hook` });
      lateSecret = n.signingSecret!;
      await w.rule({ name: 'late', events: ['INCIDENT_OPENED'], notifierIds: [n.id] });
      const counts = () => {
        const c = new Map<number, number>();
        for (const i of late.verified.flatMap(itemsOf).filter((x) => x.kind === 'INCIDENT_OPENED' && !x.reminder))
          c.set(i.incidentId!, (c.get(i.incidentId!) ?? 0) + 1);
        return c;
      };
      await eventually("every open incident at the new rule's notifier", () => counts().size === RESOURCES, 45_000);
      await settled(cluster.pods); // several routing passes on every pod: a second copy would show now
      expect(
        [...counts().values()].filter((c) => c !== 1),
        'openings sent twice to the new rule',
      ).toEqual([]);
      expect(late.refused).toEqual([]);
    } finally {
      await late.close();
    }
  }, 150_000);
});
