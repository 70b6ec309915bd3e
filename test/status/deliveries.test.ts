import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { eventually } from '../alerts/world.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { send } from '../helpers/http.ts';
import { makePki, type TestPki } from '../helpers/tls.ts';
import { startReceiver, type Receiver } from '../notifiers/receivers.ts';
import { type ReceivedMail, type SmtpReceiver, startSmtpServer } from '../notifiers/smtp.ts';
import { SubscriberFixtures, subscribersSettled } from './subscriber-fixtures.ts';
import { switchableTarget } from './world.ts';

/**
 * The subscribers' outbox delivered (daemon/status/subscribers/): a real SMTP server on loopback
 * (STARTTLS, AUTH) behind the page's EMAIL notifier, and a Standard Webhooks receiver that checks
 * each subscriber's own signature. Subscribers, posted incidents and outbox rows are written
 * straight into the database, as the sign-up and the incident API write them.
 */
const PUBLIC = 'https://status.example.test';
const USER = 'monctl';
const PASS = 'smtp-password-1';
const SECRET_A = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const SECRET_B = 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD';

let d: TestDaemon;
let pki: TestPki;
let smtp: SmtpReceiver;
let hooks: Receiver & { verified: Map<string, Array<{ id: string; body: any }>> };
let target: Awaited<ReturnType<typeof switchableTarget>>;
let fx: SubscriberFixtures;
let pageId: number;
const ids = { web: 0, wiki: 0, website: 0, internal: 0 };
/** Per webhook path: its secret, and how many requests it still fails with 503. */
const hookSecrets = new Map([
  ['/a', SECRET_A],
  ['/b', SECRET_B],
]);
const failFirst = new Map<string, number>();

beforeAll(async () => {
  pki = makePki('monctl subscriber smtp CA');
  const cert = pki.issue('smtp', 1);
  target = await switchableTarget();
  smtp = await startSmtpServer({ ...cert, user: USER, pass: PASS });
  const verified = new Map<string, Array<{ id: string; body: any }>>();
  const receiver = await startReceiver((r) => {
    const left = failFirst.get(r.path) ?? 0;
    if (left > 0) {
      failFirst.set(r.path, left - 1);
      return { status: 503, body: 'try later' };
    }
    try {
      const body = new Webhook(hookSecrets.get(r.path) ?? '').verify(r.body, r.headers as Record<string, string>);
      verified.set(r.path, [...(verified.get(r.path) ?? []), { id: String(r.headers['webhook-id']), body }]);
      return { status: 204 };
    } catch {
      return { status: 401, body: 'bad signature' };
    }
  });
  hooks = Object.assign(receiver, { verified });
  d = await startDaemon({
    args: ['--public-url', PUBLIC, '--alert-tick', '200ms', '--notifier-retry-base', '200ms', '--notifier-timeout', '5s'],
  });
  const a = d.admin;
  ids.website = (await a.call(operations.createGroup, { body: { name: 'Website', visibility: 'PUBLIC' } })).id;
  ids.internal = (await a.call(operations.createGroup, { body: { name: 'Internal', visibility: 'PUBLIC' } })).id;
  const resource = async (name: string, groupId: number) =>
    (
      await a.call(operations.createResource, {
        body: { name, resourceType: 'HTTP', target: target.url(name), intervalSeconds: 3600, groupIds: [groupId] },
      })
    ).id;
  ids.web = await resource('web', ids.website);
  ids.wiki = await resource('wiki', ids.internal);
  const notifier = await a.call(operations.createNotifier, {
    body: {
      name: 'subscriber-mail',
      type: 'EMAIL',
      config: {
        host: '127.0.0.1',
        port: smtp.port,
        username: USER,
        password: PASS,
        from: 'status@example.test',
        to: ['ops@example.test'],
        tlsCa: pki.ca,
      },
    },
  });
  const page = await a.call(operations.createStatusPage, {
    body: { slug: 'main', title: 'Example status', groupIds: [ids.website, ids.internal] },
  });
  pageId = page.id;
  fx = await SubscriberFixtures.open(d);
  await a.call(operations.updateStatusPage, { params: { id: pageId }, body: { subscriptions: true, emailNotifierId: notifier.id } });
}, 60_000);

afterAll(async () => {
  await fx?.close();
  await d?.stop();
  await Promise.all([smtp?.close(), hooks?.close(), target?.close()]);
  pki?.cleanup();
});

const mailsTo = (address: string) => smtp.mails.filter((m) => m.envelopeTo.includes(address));
const header = (m: ReceivedMail, name: string) =>
  m.mail.headerLines
    .find((h) => h.key === name)
    ?.line.slice(name.length + 1)
    .trim();

describe('subscriber deliveries', () => {
  it('email: a pending reader gets its confirmation alone; each update reaches each matching confirmed reader once, with one-click unsubscribe', async () => {
    const all = await fx.email(pageId, 'all@example.test');
    const pending = await fx.email(pageId, 'pending@example.test', { pending: true });
    const wikiOnly = await fx.email(pageId, 'wiki@example.test', { resourceIds: [ids.wiki] });
    const website = await fx.email(pageId, 'website@example.test', { groupIds: [ids.website] });
    const incident = await fx.incident(pageId, 'Checkout errors', [ids.web]);
    await fx.update(
      pageId,
      incident,
      'investigating',
      'We are looking into **errors** at checkout.',
      '<p>We are looking into <strong>errors</strong> at checkout.</p>',
    );
    await fx.update(pageId, incident, 'resolved', 'Fixed: a bad deploy was rolled back.');

    await eventually('the mails', () => smtp.mails.length >= 5);
    await subscribersSettled([d]);
    expect(mailsTo('pending@example.test')).toHaveLength(1);
    expect(mailsTo('all@example.test')).toHaveLength(2);
    expect(mailsTo('website@example.test')).toHaveLength(2);
    expect(mailsTo('wiki@example.test'), 'picked another resource').toHaveLength(0);
    expect(smtp.mails).toHaveLength(5);
    expect(smtp.mails.every((m) => m.secure && m.user === USER)).toBe(true);

    const [confirm] = mailsTo('pending@example.test');
    expect(confirm.mail.subject).toBe('Confirm your subscription to Example status');
    expect(confirm.mail.from?.text).toBe('status@example.test');
    const link = /https:\/\/status\.example\.test\/status\/main\/subscribe\/confirm\?token=(\S+)/.exec(confirm.mail.text ?? '');
    expect(link, confirm.mail.text).not.toBeNull();
    expect(fx.tokens.verify('confirm', pending, link![1])).toBe(true);
    expect(confirm.mail.html).toContain(`href="${link![0]}"`);
    expect(header(confirm, 'list-unsubscribe'), 'the confirmation has no unsubscribe').toBeUndefined();

    const [first, second] = mailsTo('all@example.test').sort((x, y) => x.mail.subject!.localeCompare(y.mail.subject!));
    expect(first.mail.subject).toBe('[Example status] Checkout errors: Investigating');
    expect(second.mail.subject).toBe('[Example status] Checkout errors: Resolved');
    expect(first.mail.text).toContain('We are looking into **errors** at checkout.');
    expect(first.mail.text).toContain(`Status page: ${PUBLIC}/status/main`);
    expect(first.mail.html).toContain('<strong>errors</strong>');
    expect(first.mail.html).toContain(`href="${PUBLIC}/status/main"`);
    for (const m of [first, second]) {
      const unsubscribe = /^<(https:\/\/status\.example\.test\/status\/main\/unsubscribe\?token=([^>]+))>$/.exec(
        header(m, 'list-unsubscribe') ?? '',
      );
      expect(unsubscribe, header(m, 'list-unsubscribe')).not.toBeNull();
      expect(fx.tokens.verify('unsubscribe', all, unsubscribe![2])).toBe(true);
      expect(header(m, 'list-unsubscribe-post')).toBe('List-Unsubscribe=One-Click');
      expect(m.mail.text).toContain(`Unsubscribe: ${unsubscribe![1]}`);
    }
    // Each reader's link is their own.
    const other = /token=([^>]+)>/.exec(header(mailsTo('website@example.test')[0], 'list-unsubscribe') ?? '')![1];
    expect(fx.tokens.verify('unsubscribe', website, other)).toBe(true);
    expect(fx.tokens.verify('unsubscribe', all, other)).toBe(false);
    // Every mail a distinct message id (the delivery's key).
    expect(new Set(smtp.mails.map((m) => m.mail.messageId)).size).toBe(5);
    void wikiOnly;
  });

  it('webhook: signed with each subscriber’s own secret, once per update; a failing receiver is retried with the same id, then delivered', async () => {
    failFirst.set('/b', 2);
    const a = await fx.webhook(pageId, `${hooks.url}/a`, SECRET_A);
    await fx.webhook(pageId, `${hooks.url}/b`, SECRET_B, { groupIds: [ids.internal] });
    const incident = await fx.incident(pageId, 'Wiki is slow', [ids.wiki], 'minor');
    const opened = await fx.update(pageId, incident, 'identified', 'A full disk.');
    await fx.update(pageId, incident, 'monitoring', 'Space freed; watching.');

    await eventually('both hooks', () => (hooks.verified.get('/a')?.length ?? 0) >= 2 && (hooks.verified.get('/b')?.length ?? 0) >= 2);
    await subscribersSettled([d]);
    const got = (path: string) => hooks.verified.get(path) ?? [];
    expect(got('/a')).toHaveLength(2);
    expect(got('/b')).toHaveLength(2);
    const bodies = got('/a')
      .map((v) => v.body)
      .sort((x, y) => x.data.update.id - y.data.update.id);
    expect(bodies[1].data.incident.state).toBe('monitoring');
    expect(bodies[0]).toMatchObject({
      type: 'status.incident.updated',
      data: {
        page: { id: pageId, slug: 'main', title: 'Example status', url: `${PUBLIC}/status/main` },
        // As it stood when the update was posted, though both were posted before either was sent.
        incident: { id: incident, title: 'Wiki is slow', impact: 'minor', state: 'identified' },
        update: { id: opened.updateId, state: 'identified', message: 'A full disk.', messageHtml: '<p>A full disk.</p>' },
      },
    });
    // /b answered 503 twice: four requests for two updates, each delivery's attempts under its one webhook-id.
    const toB = hooks.received.filter((r) => r.path === '/b');
    expect(toB).toHaveLength(4);
    const byId = new Map<string, number>();
    for (const r of toB) byId.set(String(r.headers['webhook-id']), (byId.get(String(r.headers['webhook-id'])) ?? 0) + 1);
    const rows = await fx.db.query<{ state: string; attempts: number; delivery_key: string }>(
      'SELECT d.state, d.attempts, d.delivery_key FROM subscriber_deliveries d JOIN status_subscribers s ON s.id = d.subscriber_id WHERE s.address = ?',
      `${hooks.url}/b`,
    );
    expect(rows).toHaveLength(2);
    for (const r of rows) {
      expect(r.state).toBe('sent');
      expect(byId.get(r.delivery_key)).toBe(Number(r.attempts));
    }
    expect(
      got('/b')
        .map((v) => v.id)
        .sort(),
    ).toEqual(rows.map((r) => r.delivery_key).sort());
    // The signature was made with each subscriber's own secret: /a's secret does not verify /b's requests.
    expect(() => new Webhook(SECRET_A).verify(toB[3].body, toB[3].headers as Record<string, string>)).toThrow();
    void a;
  });

  it('maintenance: a notice reaches the readers whose picks its window touches, by mail and webhook', async () => {
    const at = (ms: number) => new Date(ms).toISOString();
    const start = Date.now() + 86_400_000;
    const window = await d.admin.call(operations.createMaintenanceWindow, {
      body: { name: 'Wiki upgrade', kind: 'ONE_OFF', startsAt: at(start), endsAt: at(start + 3_600_000), resourceIds: [ids.wiki] },
    });
    const now = Date.now();
    const [notice] = await fx.db.query<{ id: number }>(
      'INSERT INTO status_maintenance_notices (page_id, window_id, title, message, message_html, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id',
      pageId,
      window.id,
      'Wiki upgrade',
      'The wiki is read-only for an hour.',
      '<p>The wiki is read-only for an hour.</p>',
      now,
      now,
    );
    await fx.maintenance(pageId, Number(notice.id));
    const subject = '[Example status] Scheduled maintenance: Wiki upgrade';
    const noticeMails = () => smtp.mails.filter((m) => m.mail.subject === subject);
    const noticeHooks = () => [...hooks.verified.values()].flat().filter((v) => v.body.type === 'status.maintenance.posted');
    await eventually('the notice', () => noticeMails().length >= 2 && noticeHooks().length >= 2);
    await subscribersSettled([d]);
    // all@ picked nothing, wiki@ picked wiki; website@ picked another group, pending@ never confirmed.
    expect(
      noticeMails()
        .flatMap((m) => m.envelopeTo)
        .sort(),
    ).toEqual(['all@example.test', 'wiki@example.test']);
    expect(noticeMails()[0].mail.text).toContain('The wiki is read-only for an hour.');
    expect(noticeMails()[0].mail.text).toContain(`From ${at(start).slice(0, 16).replace('T', ' ')} UTC`);
    expect(header(noticeMails()[0], 'list-unsubscribe-post')).toBe('List-Unsubscribe=One-Click');
    // Hook a picked nothing; hook b picked the Internal group, wiki's.
    expect(noticeHooks()).toHaveLength(2);
    expect(noticeHooks()[0].body.data.notice).toMatchObject({ id: Number(notice.id), windowId: window.id, title: 'Wiki upgrade' });
  });

  it('through the page: sign-up, the confirmation mail, its link, an update once, then the one-click unsubscribe', async () => {
    const address = 'reader@example.test';
    const json = { 'content-type': 'application/json' };
    expect((await send(d.url, 'POST', '/status/main/subscribe', { headers: json, body: JSON.stringify({ email: address }) })).status).toBe(
      202,
    );
    await eventually('the confirmation', () => mailsTo(address).length === 1);
    const link = /https:\/\/status\.example\.test(\/status\/main\/subscribe\/confirm\?token=\S+)/.exec(mailsTo(address)[0].mail.text ?? '');
    expect(link).not.toBeNull();
    // An update posted before the click does not reach the pending reader.
    const incident = await fx.incident(pageId, 'Search is down', [ids.web]);
    await fx.update(pageId, incident, 'investigating', 'Looking.');
    await subscribersSettled([d]);
    expect(mailsTo(address)).toHaveLength(1);
    expect((await send(d.url, 'POST', link![1])).status).toBe(200);
    await fx.update(pageId, incident, 'resolved', 'Search is back.');
    await eventually('the update', () => mailsTo(address).length === 2);
    await subscribersSettled([d]);
    expect(mailsTo(address).map((m) => m.mail.subject)).toEqual([
      'Confirm your subscription to Example status',
      '[Example status] Search is down: Resolved',
    ]);
    // The mail client's one-click POST to the List-Unsubscribe URL: no cookie, no CSRF token.
    const unsubscribe = /^<https:\/\/status\.example\.test(\/[^>]+)>$/.exec(header(mailsTo(address)[1], 'list-unsubscribe') ?? '')![1];
    const oneClick = { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' };
    expect((await send(d.url, 'POST', unsubscribe, oneClick)).status).toBe(200);
    await fx.update(pageId, incident, 'resolved', 'Postmortem published.');
    await subscribersSettled([d]);
    expect(mailsTo(address), 'nothing after the unsubscribe').toHaveLength(2);
  });
});
