import { EventSource } from 'eventsource';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { eventually } from '../alerts/world.ts';
import { bearer } from '../helpers/http.ts';
import { makePki, type TestPki } from '../helpers/tls.ts';
import { type Receiver, startReceiver } from '../notifiers/receivers.ts';
import { type SmtpReceiver, startSmtpServer } from '../notifiers/smtp.ts';
import { SubscriberFixtures, subscribersSettled } from '../status/subscriber-fixtures.ts';
import { type Pods, startPods } from './pods.ts';

const READERS = 8;
const INCIDENTS = 3;
const UPDATES = 5;
const STATES = ['investigating', 'identified', 'monitoring', 'monitoring', 'resolved'];

/**
 * Subscriber deliveries exactly once across pods: two daemons on one PostgreSQL database both fan
 * the subscribers' outbox out and both dispatch, polling every 200 ms. 15 posted updates reach
 * each of 8 webhook subscribers (each verified with its own secret) and 8 mail readers exactly
 * once, in one attempt each.
 */
describe('status page subscribers across pods', () => {
  let cluster: Pods;
  let pki: TestPki;
  let smtp: SmtpReceiver;
  let hooks: Receiver;
  let fx: SubscriberFixtures;
  const secrets = Array.from({ length: READERS }, (_, i) => `whsec_${Buffer.alloc(32, i + 1).toString('base64')}`);
  const verified = new Map<string, number[]>();
  let pageId = 0;

  beforeAll(async () => {
    pki = makePki('monctl subscribers pods CA');
    const cert = pki.issue('smtp', 1);
    smtp = await startSmtpServer({ ...cert, user: 'monctl', pass: 'smtp-password-1' });
    hooks = await startReceiver((r) => {
      const i = Number(r.path.slice('/h'.length));
      try {
        const body = new Webhook(secrets[i]).verify(r.body, r.headers as Record<string, string>) as { data: { update: { id: number } } };
        verified.set(r.path, [...(verified.get(r.path) ?? []), body.data.update.id]);
        return { status: 204 };
      } catch {
        return { status: 401 };
      }
    });
    cluster = await startPods(2, {
      args: ['--public-url', 'https://status.example.test', '--alert-tick', '200ms', '--notifier-retry-base', '200ms'],
    });
  }, 60_000);
  afterAll(async () => {
    await fx?.close();
    await cluster?.stop();
    await Promise.all([smtp?.close(), hooks?.close()]);
    pki?.cleanup();
  });

  it('each update reaches each subscriber once, whichever pod fanned it out and sent it', async () => {
    const a = cluster.pod('pod-a').admin;
    const notifier = await a.call(operations.createNotifier, {
      body: {
        name: 'subscriber-mail',
        type: 'EMAIL',
        config: {
          host: '127.0.0.1',
          port: smtp.port,
          username: 'monctl',
          password: 'smtp-password-1',
          from: 'status@example.test',
          to: ['ops@example.test'],
          tlsCa: pki.ca,
        },
      },
    });
    const page = await a.call(operations.createStatusPage, { body: { slug: 'main', title: 'Example status', groupIds: [] } });
    pageId = page.id;
    fx = await SubscriberFixtures.open(cluster.pod('pod-a'));
    await fx.db.query('UPDATE status_pages SET email_notifier_id = ?, subscriptions = 1 WHERE id = ?', notifier.id, page.id);
    for (let i = 0; i < READERS; i++) {
      await fx.webhook(page.id, `${hooks.url}/h${i}`, secrets[i]);
      await fx.email(page.id, `reader-${i}@example.test`);
    }
    const updates: number[] = [];
    for (let n = 0; n < INCIDENTS; n++) {
      const incident = await fx.incident(page.id, `Incident ${n}`, []);
      for (const state of STATES) updates.push((await fx.update(page.id, incident, state, `Now ${state}.`)).updateId);
    }
    const total = INCIDENTS * UPDATES;
    await eventually(
      'every delivery',
      () => smtp.mails.length >= total * READERS && [...verified.values()].reduce((s, v) => s + v.length, 0) >= total * READERS,
      60_000,
    );
    await subscribersSettled(cluster.pods);

    for (let i = 0; i < READERS; i++) {
      expect(
        (verified.get(`/h${i}`) ?? []).sort((x, y) => x - y),
        `webhook ${i}`,
      ).toEqual([...updates].sort((x, y) => x - y));
      const mails = smtp.mails.filter((m) => m.envelopeTo.includes(`reader-${i}@example.test`));
      expect(mails, `reader ${i}`).toHaveLength(total);
      expect(new Set(mails.map((m) => m.mail.messageId)).size).toBe(total);
    }
    expect(hooks.received).toHaveLength(total * READERS);
    expect(smtp.mails).toHaveLength(total * READERS);
    const rows = await fx.db.query<{ state: string; attempts: number; n: number }>(
      'SELECT state, attempts, COUNT(*) AS n FROM subscriber_deliveries GROUP BY state, attempts',
    );
    expect(rows.map((r) => [r.state, Number(r.attempts), Number(r.n)])).toEqual([['sent', 1, total * READERS * 2]]);
    const fanned = await fx.db.query<{ fanned_by: string; n: number }>(
      "SELECT split_part(fanned_by, ':', 1) AS fanned_by, COUNT(*) AS n FROM subscriber_messages GROUP BY 1 ORDER BY 1",
    );
    expect(fanned.reduce((s, r) => s + Number(r.n), 0)).toBe(total);
    // Each pod counts what it sent: together, each delivery once.
    const sent = await Promise.all(
      cluster.pods.map(async (p) => {
        const text = await fetch(`${p.url}/actuator/prometheus`, { headers: bearer(p.adminKey) }).then((r) => r.text());
        return [...text.matchAll(/^monctl_subscriber_deliveries_total\{kind="\w+",result="(\w+)"\} (\d+)$/gm)].map(
          (m) => [m[1], Number(m[2])] as const,
        );
      }),
    );
    expect(sent.flat().filter(([result]) => result !== 'sent')).toEqual([]);
    expect(sent.flat().reduce((sum, [, n]) => sum + n, 0)).toBe(total * READERS * 2);
    console.info(
      'messages fanned out per pod',
      Object.fromEntries(fanned.map((r) => [r.fanned_by, Number(r.n)])),
      'deliveries sent per pod',
      sent.map((rows) => rows.reduce((sum, [, n]) => sum + n, 0)),
    );
  }, 90_000);

  // Each pod keeps the page's views and feeds for 10 s and reads its live part every 30 s; a post
  // through another pod must not wait for either: the posted-incident tables notify every pod.
  it("a post through pod A reaches pod B's live readers, page and feed within a few seconds", async () => {
    const b = cluster.pod('pod-b');
    const frames: Array<{ kind: string; posts?: string }> = [];
    const source = new EventSource(`${b.url}/api/status-pages/main/events`);
    for (const kind of ['SNAPSHOT', 'PAGE_CHANGED'])
      source.addEventListener(kind, (e) => frames.push({ kind, ...JSON.parse((e as MessageEvent).data) }));
    try {
      await eventually('the snapshot on pod B', () => frames.length > 0);
      const before = frames[0].posts;
      // Pod B has both cached now.
      expect((await fetch(`${b.url}/status/main/feed.atom`)).status).toBe(200);
      expect(await (await fetch(`${b.url}/status/main`)).text()).not.toContain('Seen on every pod');
      await cluster.pod('pod-a').admin.call(operations.openPostedIncident, {
        params: { id: pageId },
        body: { title: 'Seen on every pod', impact: 'minor', state: 'investigating', message: 'Looking into it.' },
      });
      await eventually(
        'the live readers of pod B',
        () => frames.some((f) => f.kind === 'PAGE_CHANGED' && f.posts && f.posts !== before),
        8_000,
      );
      await eventually(
        'the page of pod B',
        async () => (await (await fetch(`${b.url}/status/main`)).text()).includes('Seen on every pod'),
        8_000,
      );
      await eventually(
        'the feed of pod B',
        async () => (await (await fetch(`${b.url}/status/main/feed.atom`)).text()).includes('Seen on every pod'),
        8_000,
      );
    } finally {
      source.close();
    }
  });
});
