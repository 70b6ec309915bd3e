import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { subscriberBox } from '../../daemon/status/subscribers/secret.ts';
import { SubscriberTokens } from '../../daemon/status/subscribers/tokens.ts';
import { operations } from '../../src/api/operations.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { bearer, expectProblem, fieldsOf, send, sendJson, until, type WireResponse } from '../helpers/http.ts';
import { moveClock, TEST_CLOCK_ARGS } from '../helpers/test-clock.ts';
import { type DbHandle, onPostgres, openDb } from '../helpers/test-database.ts';

/**
 * Readers signing up and out of a status page (docs/API.md#subscriptions), on
 * one daemon behind a "proxy": --trusted-proxies 127.0.0.1, so each test picks
 * its clients with X-Forwarded-For and the rate limits of one test do not
 * touch another's. Sending is the deliveries' work: these tests count the
 * outbox's CONFIRM rows.
 */
let d: TestDaemon;
let db: DbHandle;
let tokens: SubscriberTokens;
let installSecret: Buffer;
const page = { id: 0, slug: 'shop' };
const ids = { website: 0, secret: 0, web: 0, vault: 0, email: 0, webhook: 0 };

beforeAll(async () => {
  d = await startDaemon({ args: ['--trusted-proxies', '127.0.0.1/32', ...TEST_CLOCK_ARGS] });
  const a = d.admin;
  ids.website = (await a.call(operations.createGroup, { body: { name: 'Website', visibility: 'PUBLIC' } })).id;
  ids.secret = (await a.call(operations.createGroup, { body: { name: 'Secret', visibility: 'HIDDEN' } })).id;
  const resource = async (name: string, groupIds: number[]) =>
    (
      await a.call(operations.createResource, {
        body: { name, resourceType: 'HTTP', target: 'http://127.0.0.1:9/', intervalSeconds: 3600, groupIds },
      })
    ).id;
  ids.web = await resource('web', [ids.website]);
  ids.vault = await resource('vault', [ids.secret]);
  const mail = { host: '127.0.0.1', port: 2525, security: 'NONE', from: 'status@example.test', to: ['ops@example.test'] };
  ids.email = (await a.call(operations.createNotifier, { body: { name: 'mail', type: 'EMAIL', config: mail } as never })).id;
  ids.webhook = (
    await a.call(operations.createNotifier, { body: { name: 'hook', type: 'WEBHOOK', config: { url: 'http://127.0.0.1:9/h' } } as never })
  ).id;
  const created = await a.call(operations.createStatusPage, {
    body: { slug: page.slug, title: 'Shop', subscriptions: true, emailNotifierId: ids.email },
  });
  page.id = created.id;
  db = await openDb(d);
  const [row] = await db.query<{ value: string }>("SELECT value FROM settings WHERE key = 'install_secret'");
  installSecret = Buffer.from(row.value, 'base64');
  tokens = new SubscriberTokens(installSecret);
}, 60_000);

afterAll(async () => {
  await db?.close();
  await d?.stop();
});

const PATH = `/status/${page.slug}/subscribe`;

/** A sign-up as the page's form posts it (`json`: as an API client does), from client `ip`. */
function signUp(ip: string, body: Record<string, string | string[] | number[]>, json = false): Promise<WireResponse> {
  const headers = { 'x-forwarded-for': ip, 'content-type': json ? 'application/json' : 'application/x-www-form-urlencoded' };
  const form = new URLSearchParams();
  if (!json) for (const [k, v] of Object.entries(body)) for (const one of [v].flat()) form.append(k, String(one));
  return send(d.url, 'POST', PATH, { headers, body: json ? JSON.stringify(body) : form.toString() });
}

const confirms = async (address?: string) =>
  (
    await db.query<{ n: number }>(
      `SELECT COUNT(*) AS n FROM subscriber_messages m JOIN status_subscribers s ON s.id = m.subscriber_id
       WHERE m.kind = 'CONFIRM' ${address ? 'AND s.address_key = ?' : ''}`,
      ...(address ? [address] : []),
    )
  )[0].n;

interface Sub {
  id: number;
  address: string;
  address_key: string;
  confirmed_at: number | null;
  token_nonce: string;
  group_ids: string;
}
const subscriber = async (key: string) =>
  (await db.query<Sub>("SELECT * FROM status_subscribers WHERE address_key = ? AND kind = 'EMAIL'", key))[0] as Sub | undefined;

describe('page settings', () => {
  it('takes subscriptions and an EMAIL notifier, and refuses any other notifier with 400 naming emailNotifierId', async () => {
    const got = await d.admin.call(operations.getStatusPage, { params: { id: page.id } });
    expect(got).toMatchObject({ subscriptions: true, emailNotifierId: ids.email });
    for (const bad of [ids.webhook, 999_999]) {
      const res = await sendJson(d.url, 'PATCH', `/admin/api/status-pages/${page.id}`, { emailNotifierId: bad }, bearer(d.adminKey));
      expect(fieldsOf(expectProblem(res, 400))).toEqual(['emailNotifierId']);
    }
    const res = await sendJson(
      d.url,
      'POST',
      '/admin/api/status-pages',
      { slug: 'x', title: 'X', emailNotifierId: ids.webhook },
      bearer(d.adminKey),
    );
    expect(fieldsOf(expectProblem(res, 400))).toEqual(['emailNotifierId']);
  });

  it('a page without sign-ups has no form, and its sign-up path is 404', async () => {
    const quiet = await d.admin.call(operations.createStatusPage, { body: { slug: 'quiet', title: 'Quiet', emailNotifierId: ids.email } });
    expect(quiet).toMatchObject({ subscriptions: false, emailNotifierId: ids.email });
    expect((await send(d.url, 'GET', '/status/quiet')).text).not.toContain('<form');
    const res = await send(d.url, 'POST', '/status/quiet/subscribe', {
      headers: { 'x-forwarded-for': '192.0.2.200', 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'a@example.com' }),
    });
    expectProblem(res, 404);
  });
});

describe('the form', () => {
  it('is a plain labelled form posting to the page, allowed by the CSP, offering only what the reader sees', async () => {
    const res = await send(d.url, 'GET', `/status/${page.slug}`);
    expect(res.status).toBe(200);
    expect(res.headers['content-security-policy']).toContain("form-action 'self'");
    expect(res.text).toContain(`<form method="post" action="/status/${page.slug}/subscribe">`);
    expect(res.text).toMatch(/<label for="sub-email">[^<]+<\/label>.*<input id="sub-email" type="email" name="email" required/s);
    // The only group an anonymous reader sees; one group is not worth a choice on the page.
    expect(res.text).not.toContain(`value="${ids.secret}"`);
    expect(res.text).toContain(`<a href="${PATH}">Choose services to follow</a>`);
    const full = await send(d.url, 'GET', PATH);
    expect(full.status).toBe(200);
    expect(full.headers['content-security-policy']).toMatch(/form-action 'self'/);
    expect(full.text).toContain(`<input type="checkbox" name="resource" value="${ids.web}">`);
    expect(full.text).not.toContain(`value="${ids.vault}"`);
  });
});

describe('signing up', () => {
  it('makes a pending subscriber and ONE confirmation, however often the address (in any case) is signed up; again after an hour', async () => {
    const first = await signUp('192.0.2.1', { email: ' Ann.Lee@Example.COM ', group: String(ids.website) });
    expect(first.status).toBe(202);
    expect(first.headers['content-type']).toMatch(/^text\/html/);
    expect(first.text).toContain('confirmation link is on its way');
    const row = await subscriber('ann.lee@example.com');
    expect(row).toMatchObject({ address: 'Ann.Lee@Example.COM', confirmed_at: null, group_ids: `[${ids.website}]` });
    expect(await confirms('ann.lee@example.com')).toBe(1);

    const again = await signUp('192.0.2.2', { email: 'ann.lee@example.com' }, true);
    expect(again.status).toBe(202);
    expect(again.json()).toMatchObject({ status: 'pending' });
    expect(await confirms('ann.lee@example.com')).toBe(1);

    await moveClock(d, { advanceSeconds: 3660 });
    // The re-send takes the picks of the sign-up that caused it (the address is not confirmed: nothing to protect yet).
    expect((await signUp('192.0.2.3', { email: 'ANN.LEE@example.com', group: String(ids.website) })).status).toBe(202);
    expect(await confirms('ann.lee@example.com')).toBe(2);
    expect((await db.query('SELECT id FROM status_subscribers WHERE address_key = ?', 'ann.lee@example.com')).length).toBe(1);
  });

  it('answers the same for a confirmed address, and leaves it as it is', async () => {
    const json = async (email: string) => {
      const res = await signUp('192.0.2.10', { email }, true);
      return { status: res.status, body: res.text };
    };
    const fresh = await json('bob@example.com');
    const row = (await subscriber('bob@example.com'))!;
    const link = `${PATH}/confirm?token=${tokens.make('confirm', row)}`;
    // GET (a mail scanner's prefetch) changes nothing: it shows a button.
    const shown = await send(d.url, 'GET', link);
    expect(shown.status).toBe(200);
    expect(shown.text).toMatch(
      /<form class="sub" method="post" action="[^"]+confirm\?token=[^"]+"><button type="submit">Confirm subscription/,
    );
    expect(shown.headers['referrer-policy']).toBe('no-referrer');
    expect((await subscriber('bob@example.com'))!.confirmed_at).toBeNull();
    const done = await send(d.url, 'POST', link, { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: '' });
    expect(done.status).toBe(200);
    expect(done.text).toContain('Subscribed');
    expect((await subscriber('bob@example.com'))!.confirmed_at).not.toBeNull();

    const before = await confirms();
    const confirmed = await json('bob@example.com');
    expect(confirmed).toEqual(fresh);
    expect(await confirms()).toBe(before);
    expect((await subscriber('bob@example.com'))!.confirmed_at).not.toBeNull();
  });

  it('confirm and unsubscribe links work for their own subscriber, purpose and page only', async () => {
    await signUp('192.0.2.20', { email: 'cat@example.com' });
    const row = (await subscriber('cat@example.com'))!;
    const unsub = tokens.make('unsubscribe', row);
    // The unsubscribe link does not confirm; a forged MAC does nothing.
    expect((await send(d.url, 'POST', `${PATH}/confirm?token=${unsub}`)).status).toBe(404);
    const forged = `${row.id}.${'A'.repeat(43)}`;
    expect((await send(d.url, 'POST', `/status/${page.slug}/unsubscribe?token=${forged}`)).status).toBe(200);
    expect(await subscriber('cat@example.com')).toBeDefined();
    const bad = await send(d.url, 'GET', `${PATH}/confirm?token=nonsense`, { headers: { accept: 'application/json' } });
    expect(fieldsOf(expectProblem(bad, 400))).toEqual(['token']);
    const none = await send(d.url, 'GET', `/status/${page.slug}/unsubscribe`, { headers: { accept: 'application/json' } });
    expect(fieldsOf(expectProblem(none, 400))).toEqual(['token']);
    // Another page's path with this page's link: not its subscriber.
    expect((await send(d.url, 'POST', `/status/quiet/subscribe/confirm?token=${tokens.make('confirm', row)}`)).status).toBe(404);
    expect((await subscriber('cat@example.com'))!.confirmed_at).toBeNull();
  });

  it('unsubscribes on the button and on the RFC 8058 one-click POST; the address is gone', async () => {
    await signUp('192.0.2.30', { email: 'dan@example.com' });
    const row = (await subscriber('dan@example.com'))!;
    const link = `/status/${page.slug}/unsubscribe?token=${tokens.make('unsubscribe', row)}`;
    const shown = await send(d.url, 'GET', link);
    expect(shown.status).toBe(200);
    expect(shown.text).toContain('<button type="submit">Unsubscribe</button>');
    expect(await subscriber('dan@example.com')).toBeDefined();
    // What a mail client sends for List-Unsubscribe-Post: no cookie, no CSRF token.
    const oneClick = { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' };
    expect((await send(d.url, 'POST', link, oneClick)).status).toBe(200);
    expect(await subscriber('dan@example.com')).toBeUndefined();
    expect(await confirms('dan@example.com')).toBe(0);
    // A second click (the reader's, after the mail client's) is fine.
    expect((await send(d.url, 'POST', link, oneClick)).status).toBe(200);
  });

  // PostgreSQL row locks: a fan-out pass claims a CONFIRM message (locks it), then
  // writes its delivery (a key-share lock on the subscriber). The unsubscribe meets
  // it halfway; it used to lock the subscriber first and deadlock: a 500.
  it.runIf(onPostgres())('unsubscribes while a fan-out pass holds the confirmation (no deadlock)', async () => {
    await signUp('192.0.2.31', { email: 'eve@example.com' });
    const row = (await subscriber('eve@example.com'))!;
    const link = `/status/${page.slug}/unsubscribe?token=${tokens.make('unsubscribe', row)}`;
    const oneClick = { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' };
    const watcher = await openDb(d);
    try {
      let answer: Promise<WireResponse> | undefined;
      await db.transaction(async () => {
        const [message] = await db.query<{ id: number }>(
          'SELECT id FROM subscriber_messages WHERE subscriber_id = ? FOR NO KEY UPDATE',
          row.id,
        );
        await db.query('DELETE FROM subscriber_deliveries WHERE subscriber_id = ?', row.id);
        answer = send(d.url, 'POST', link, oneClick);
        await until(
          async () =>
            (
              await watcher.query(
                "SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query ILIKE 'delete%'",
              )
            ).length > 0,
          20,
        );
        await db.query(
          `INSERT INTO subscriber_deliveries (message_id, subscriber_id, delivery_key, state, created_at, next_attempt_at)
           VALUES (?, ?, 'msg_lock_order', 'pending', 0, 0)`,
          message.id,
          row.id,
        );
      });
      expect((await answer!).status).toBe(200);
      expect(await subscriber('eve@example.com')).toBeUndefined();
    } finally {
      await watcher.close();
    }
  });

  it('answers every bad input with a 4xx naming the field', async () => {
    // A client each, so that the client throttle stays out of it.
    let n = 0;
    const ip = () => `192.0.2.${100 + ++n}`;
    const problem = async (body: Record<string, unknown>, field: string) => {
      const res = await send(d.url, 'POST', PATH, {
        headers: { 'x-forwarded-for': ip(), 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(fieldsOf(expectProblem(res, 400)), JSON.stringify(body)).toEqual([field]);
    };
    await problem({}, 'email');
    await problem({ email: 42 }, 'email');
    for (const email of ['nobody', 'a@b', 'a b@example.com', '@example.com', 'a@-x.com', `${'a'.repeat(65)}@example.com`, 'a@1.2.3.4']) {
      await problem({ email }, 'email');
    }
    await problem({ email: 'e@example.com', extra: 1 }, 'extra');
    await problem({ email: 'e@example.com', groupIds: [ids.secret] }, 'groupIds');
    await problem({ email: 'e@example.com', resourceIds: [ids.vault] }, 'resourceIds');
    await problem({ email: 'e@example.com', resourceIds: 'all' }, 'resourceIds');
    await problem({ email: 'e@example.com', groupIds: [-1] }, 'groupIds');
    // The no-JS form gets a page that names the field.
    const form = await signUp(ip(), { email: 'not an address' });
    expect(form.status).toBe(400);
    expect(form.headers['content-type']).toMatch(/^text\/html/);
    expect(form.text).toContain('<li>email: must be an email address');
    const hidden = await signUp(ip(), { email: 'e@example.com', group: String(ids.secret) });
    expect(hidden.status).toBe(400);
    expect(hidden.text).toContain('<li>group: group');
    const xml = await send(d.url, 'POST', PATH, { headers: { 'x-forwarded-for': ip(), 'content-type': 'text/xml' }, body: '<a/>' });
    expect(xml.status).toBe(415);
    const big = await signUp(ip(), { email: `${'x'.repeat(20_000)}@example.com` });
    expect(big.status).toBe(413);
    expect(await subscriber('e@example.com')).toBeUndefined();
  });
});

describe('on a custom hostname', () => {
  it("the page's form posts to its own sign-up path on the edge listener, which the page serves there", async () => {
    const edge = await d.admin.call(operations.createStatusPage, {
      body: { slug: 'edgy', title: 'Edgy', subscriptions: true, emailNotifierId: ids.email, customHostname: 'status.example.test' },
    });
    const host = { host: 'status.example.test' };
    const shown = await send(d.edgeUrl, 'GET', '/', { headers: host });
    expect(shown.text).toContain('<form method="post" action="/status/edgy/subscribe">');
    const res = await send(d.edgeUrl, 'POST', '/status/edgy/subscribe', {
      headers: { ...host, 'x-forwarded-for': '192.0.2.60', 'content-type': 'application/x-www-form-urlencoded' },
      body: 'email=edge%40example.com',
    });
    expect(res.status, res.text).toBe(202);
    const [row] = await db.query<{ page_id: number }>("SELECT page_id FROM status_subscribers WHERE address_key = 'edge@example.com'");
    expect(row.page_id).toBe(edge.id);
    // Another page's path is not this hostname's to answer: the routes' (none here).
    expect((await send(d.edgeUrl, 'POST', `/status/${page.slug}/subscribe`, { headers: host })).status).toBe(404);
  });
});

describe('abuse', () => {
  it('throttles 1,000 sign-ups from one client with 429 and Retry-After, never 5xx; an IPv6 client counts by its /64', async () => {
    const before = await confirms();
    const statuses: number[] = [];
    let retryAfter: string | undefined;
    for (let batch = 0; batch < 1000; batch += 50) {
      const answers = await Promise.all(
        Array.from({ length: 50 }, (_, i) => signUp('203.0.113.7', { email: `flood${batch + i}@example.com` }, true)),
      );
      for (const res of answers) {
        statuses.push(res.status);
        if (res.status === 429) retryAfter ??= String(res.headers['retry-after']);
      }
    }
    expect(statuses.filter((s) => s === 202).length).toBe(10);
    expect(statuses.filter((s) => s === 429).length).toBe(990);
    expect(Number(retryAfter)).toBeGreaterThan(0);
    expect(await confirms()).toBe(before + 10);

    const v6 = (i: number) => signUp(`2001:db8:5:6::${(i + 1).toString(16)}`, { email: `v6-${i}@example.com` }, true);
    const answers = [];
    for (let i = 0; i < 12; i++) answers.push((await v6(i)).status);
    expect(answers).toEqual([...Array(10).fill(202), 429, 429]);
    expect((await signUp('2001:db8:5:7::1', { email: 'v6-other@example.com' }, true)).status).toBe(202);
  });

  it('a never-confirmed address signed up from many clients gets one confirmation, then 429', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++) statuses.push((await signUp(`198.51.100.${i + 1}`, { email: 'Victim@Example.com' })).status);
    expect(statuses.slice(0, 3)).toEqual([202, 202, 202]);
    expect(statuses.slice(3).every((s) => s === 429)).toBe(true);
    expect(await confirms('victim@example.com')).toBe(1);
  });
});

describe('admin API', () => {
  it('lists subscribers with their addresses to ADMIN only; addresses never reach the public summary', async () => {
    const list = await d.admin.call(operations.listStatusPageSubscribers, { params: { id: page.id } });
    expect(list.find((s) => s.address === 'Ann.Lee@Example.COM')).toMatchObject({
      kind: 'EMAIL',
      confirmed: false,
      groupIds: [ids.website],
    });
    expect(list.find((s) => s.address === 'bob@example.com')).toMatchObject({ confirmed: true });
    expectProblem(await send(d.url, 'GET', `/admin/api/status-pages/${page.id}/subscribers`), 401);
    expectProblem(await send(d.url, 'GET', '/admin/api/status-pages/999999/subscribers', { headers: bearer(d.adminKey) }), 404);
    const summary = await send(d.url, 'GET', `/api/status-pages/${page.slug}/summary`);
    expect(summary.text).not.toMatch(/example\.com/i);
    expect(summary.json().page.subscribe).toEqual({ email: true });
  });

  it('adds a webhook subscriber whose whsec_ secret is shown once and stored sealed; removes subscribers', async () => {
    const url = `/admin/api/status-pages/${page.id}/subscribers`;
    const created = await d.admin.call(operations.addStatusPageWebhookSubscriber, {
      params: { id: page.id },
      body: { url: 'https://hooks.example.test/status', groupIds: [ids.website] },
    });
    expect(created).toMatchObject({ kind: 'WEBHOOK', confirmed: true, groupIds: [ids.website] });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const [row] = await db.query<{ secret_enc: string }>('SELECT secret_enc FROM status_subscribers WHERE id = ?', created.id);
    expect(row.secret_enc).not.toContain(created.secret.slice(6));
    expect(subscriberBox(installSecret).open(row.secret_enc)).toBe(created.secret);
    const listed = await d.admin.call(operations.listStatusPageSubscribers, { params: { id: page.id } });
    expect(JSON.stringify(listed)).not.toContain(created.secret);

    const post = (body: unknown) => sendJson(d.url, 'POST', url, body, bearer(d.adminKey));
    expectProblem(await post({ url: 'https://hooks.example.test/status' }), 409);
    for (const bad of ['ftp://x.example/', 'not a url']) expect(fieldsOf(expectProblem(await post({ url: bad }), 400))).toEqual(['url']);
    expect(fieldsOf(expectProblem(await post({ url: 'https://h.example/', groupIds: [999_999] }), 400))).toEqual(['groupIds']);
    expect(fieldsOf(expectProblem(await post({ url: 'https://h.example/', secret: 'x' }), 400))).toEqual(['secret']);

    const del = (id: number) => send(d.url, 'DELETE', `${url}/${id}`, { headers: bearer(d.adminKey) });
    expect((await del(created.id)).status).toBe(200);
    expectProblem(await del(created.id), 404);
  });
});
