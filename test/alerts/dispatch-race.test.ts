import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import type { Agent } from 'undici';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Dispatcher } from '../../daemon/alerts/delivery/dispatcher.ts';
import { createNotifierDispatcher } from '../../daemon/alerts/notifiers/http-post.ts';
import { loadSender } from '../../daemon/alerts/notifiers/senders.ts';
import { loadInstallSecret } from '../../daemon/auth/install-secret.ts';
import { defaultDaemonConfig } from '../../daemon/config/daemon-config.ts';
import { openStore, type OpenedStore } from '../../daemon/store/store.ts';
import { startDaemon } from '../helpers/daemon.ts';
import { bearer, send } from '../helpers/http.ts';
import { CHANNEL_TYPES, type ChannelReceiver, channelConfig, startChannelReceiver } from '../helpers/channel-receiver.ts';
import { startWebhookReceiver } from '../notifiers/receivers.ts';

/**
 * Exactly once between dispatchers: two dispatchers, each on its own
 * connection(s) to one database (SQLite or PostgreSQL) (as two daemons would be), race for 1,000 due
 * notifications. Every message reaches the receiver once, signed, and every
 * notification records one attempt. The claim is the database's
 * conditional update; nothing in memory is shared between the two. The
 * channel types of their own module race too: PER_TYPE notifications each,
 * every subject named in exactly one request to its type's receiver.
 */
const N = 1000;
const PER_TYPE = 20;
const TOTAL = N + PER_TYPE * CHANNEL_TYPES.length;
let channels: ChannelReceiver;
const channelNotifiers: number[] = [];
let base = '';
let signingSecret = '';
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
let databaseUrl: string | undefined;
const stores: OpenedStore[] = [];
const pools: Agent[] = [];

beforeAll(async () => {
  base = mkdtempSync(join(tmpdir(), 'monctl-race-'));
  receiver = await startWebhookReceiver(() => signingSecret);
  channels = await startChannelReceiver();
  // A real daemon creates the notifier (sealed secrets and all), then stops and leaves the database to the race.
  const d = await startDaemon({ dataDir: join(base, 'data'), args: ['--scheduler', 'off'] });
  const res = await send(d.url, 'POST', '/admin/api/notifiers', {
    headers: { ...bearer(d.adminKey), 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'hook', type: 'WEBHOOK', config: { url: `${receiver.url}/hook` } }),
  });
  expect(res.status, res.text).toBe(200);
  signingSecret = res.json().signingSecret;
  for (const type of CHANNEL_TYPES) {
    const created = await send(d.url, 'POST', '/admin/api/notifiers', {
      headers: { ...bearer(d.adminKey), 'content-type': 'application/json' },
      body: JSON.stringify({ name: type.toLowerCase(), type, config: channelConfig(type, channels.url) }),
    });
    expect(created.status, created.text).toBe(200);
    channelNotifiers.push(created.json().id);
  }
  databaseUrl = d.databaseUrl;
  await d.stop();
});

afterAll(async () => {
  await Promise.all(stores.map((s) => s.close()));
  await Promise.all(pools.map((p) => p.close()));
  await receiver?.close();
  await channels?.close();
  rmSync(base, { recursive: true, force: true });
});

it('two dispatchers on one database send each of 1,000 webhook notifications, and 20 of every channel type, exactly once', async () => {
  // Two stores (SQLite: two connections to the file; PostgreSQL: two pools), as two daemons would have.
  const a = await openStore(join(base, 'data'), databaseUrl);
  const b = await openStore(join(base, 'data'), databaseUrl);
  stores.push(a, b);
  const notifierId = (await a.db.selectFrom('notifiers').select('id').where('type', '=', 'WEBHOOK').executeTakeFirstOrThrow()).id;
  const now = Date.now();
  await a.db.transaction().execute(async (trx) => {
    for (let i = 0; i < TOTAL; i++) {
      const payload = {
        kind: 'INCIDENT_OPENED',
        subject: { type: 'resource', id: i + 1, name: `rc${i}z`, target: `http://10.0.0.1/${i}` },
        incidentId: i + 1,
        openedAt: now,
        resolvedAt: null,
        cause: { message: 'HTTP 503', errorCode: 'HTTP_STATUS' },
        cert: null,
      };
      const event = await trx
        .insertInto('alert_events')
        .values({
          kind: 'INCIDENT_OPENED',
          subject_type: 'resource',
          resource_id: i + 1,
          agent_id: null,
          incident_id: i + 1,
          payload: JSON.stringify(payload),
          suppressed: null,
          created_at: now,
          routed_at: now,
          routed_by: 'test',
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      const n = await trx
        .insertInto('notifications')
        .values({
          notifier_id: i < N ? notifierId : channelNotifiers[Math.floor((i - N) / PER_TYPE)],
          message_id: `msg_race_${i}`,
          state: 'pending',
          created_at: now,
          send_after: now,
          next_attempt_at: now,
          claimed_by: null,
          claimed_until: null,
          sent_at: null,
          last_error: null,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      await trx.insertInto('notification_items').values({ notification_id: n.id, event_id: event.id, reminder: 0 }).execute();
    }
  });

  const log = pino({ level: 'silent' });
  const dispatcherOn = async (store: OpenedStore, pod: string) => {
    // Each with its own notifier pool, as two daemons would have.
    const config = defaultDaemonConfig();
    const notifierPool = createNotifierDispatcher(config.notifierTimeoutMs);
    pools.push(notifierPool);
    const ctx = { db: store.db, log, config, installSecret: await loadInstallSecret(store.db), notifierPool };
    return new Dispatcher({ db: store.db, log, pod, loadSender: (id) => loadSender(ctx, id), retryBaseMs: 60_000, timeoutMs: 10_000 });
  };
  const dispatchers = [await dispatcherOn(a, 'pod-a'), await dispatcherOn(b, 'pod-b')];
  const started = [0, 0];
  const pending = async () =>
    Number(
      (
        await a.db
          .selectFrom('notifications')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('state', '=', 'pending')
          .executeTakeFirstOrThrow()
      ).n,
    );
  const deadline = Date.now() + 60_000;
  while ((await pending()) > 0 && Date.now() < deadline) {
    const counts = await Promise.all(dispatchers.map((d) => d.dispatchOnce()));
    counts.forEach((c, i) => (started[i] += c));
    await new Promise((r) => setTimeout(r, 20));
  }
  await Promise.all(dispatchers.map((d) => d.stop()));

  expect(await pending()).toBe(0);
  // Both took part: the race was real.
  expect(started[0]).toBeGreaterThan(0);
  expect(started[1]).toBeGreaterThan(0);
  expect(started[0] + started[1]).toBe(TOTAL);
  const ids = receiver.received.map((r) => r.headers['webhook-id']);
  expect(ids.length).toBe(N);
  expect(new Set(ids).size).toBe(N);
  expect(receiver.refused).toEqual([]);
  expect(receiver.verified.length).toBe(N);
  const attempts = await a.db.selectFrom('notification_attempts').select(['notification_id', 'attempt', 'ok']).execute();
  expect(attempts.length).toBe(TOTAL);
  expect(attempts.every((x) => x.attempt === 1 && x.ok === 1)).toBe(true);
  const rows = await a.db.selectFrom('notifications').select(['state', 'attempts', 'last_error']).execute();
  expect(rows.filter((r) => r.state !== 'sent' || r.attempts !== 1)).toEqual([]);
  // Every channel type: each of its subjects named in exactly one request (PAGERDUTY and OPSGENIE: one event each).
  const named = channels.named(/rc\d+z/);
  CHANNEL_TYPES.forEach((type, t) => {
    const expected = Array.from({ length: PER_TYPE }, (_, i) => [`rc${N + t * PER_TYPE + i}z`, 1]);
    expect([...named.get(type)!].sort(), type).toEqual(expected.sort());
  });
  expect(channels.requests).toHaveLength(PER_TYPE * CHANNEL_TYPES.length);
}, 120_000);
