import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { bearer, expectProblem, fieldsOf, sendJson, until } from '../helpers/http.ts';
import { type DbHandle, openDb } from '../helpers/test-database.ts';
import { switchableTarget } from './world.ts';

interface OutboxRow {
  kind: string;
  incident_id: number | null;
  update_id: number | null;
  payload: string;
}

/**
 * `/admin/api/status-pages/{id}/incidents` and `/maintenance-notices`: what an operator
 * posts, its timeline, the outbox row each update writes, and problems naming the field.
 */
describe('posted incidents: the admin API', () => {
  let d: TestDaemon;
  let db: DbHandle;
  let target: Awaited<ReturnType<typeof switchableTarget>>;
  let userKey: string;
  let pageId: number;
  let otherPageId: number;
  const ids = { web: 0, api: 0, flaky: 0, vault: 0, elsewhere: 0 };

  beforeAll(async () => {
    [d, target] = await Promise.all([startDaemon(), switchableTarget()]);
    db = await openDb(d);
    const a = d.admin;
    userKey = (await a.call(operations.createApiKey, { body: { name: 'user', role: 'USER' } })).token;
    const group = async (name: string, visibility: 'PUBLIC' | 'HIDDEN') =>
      (await a.call(operations.createGroup, { body: { name, visibility } })).id;
    const website = await group('Website', 'PUBLIC');
    const secret = await group('Secret', 'HIDDEN');
    const other = await group('Other', 'PUBLIC');
    const resource = async (name: string, groupIds: number[], thresholds = {}) =>
      (
        await a.call(operations.createResource, {
          body: { name, resourceType: 'HTTP', target: target.url(name), intervalSeconds: 3600, groupIds, ...thresholds },
        })
      ).id;
    ids.web = await resource('web', [website]);
    ids.api = await resource('api', [website]);
    ids.flaky = await resource('flaky', [website], { failureThreshold: 1, successThreshold: 1 });
    ids.vault = await resource('vault', [secret]);
    ids.elsewhere = await resource('elsewhere', [other]);
    // The first checks (new resources are due at once) are done before a test checks by hand.
    await until(async () => (await a.call(operations.listAdminResources)).every((r) => r.latestCheckedAt !== null));
    pageId = (await a.call(operations.createStatusPage, { body: { slug: 'main', title: 'Main', groupIds: [website, secret] } })).id;
    otherPageId = (await a.call(operations.createStatusPage, { body: { slug: 'other', title: 'Other', groupIds: [other] } })).id;
  }, 60_000);
  afterAll(async () => {
    await db?.close();
    await Promise.all([d?.stop(), target?.close()]);
  });

  const call = (method: string, path: string, body?: unknown, token = d.adminKey) => sendJson(d.url, method, path, body, bearer(token));
  const incidents = (page = pageId) => `/admin/api/status-pages/${page}/incidents`;
  const ok = async (method: string, path: string, body?: unknown) => {
    const res = await call(method, path, body);
    expect(res.status, res.text).toBe(200);
    return res.json();
  };
  const outbox = (incidentId: number) =>
    db.query<OutboxRow>(
      'SELECT kind, incident_id, update_id, payload FROM subscriber_messages WHERE incident_id = ? ORDER BY id',
      incidentId,
    );

  it('opens, updates and resolves an incident; each update is in the outbox, written with it', async () => {
    const opened = await ok('POST', incidents(), {
      title: 'Checkout is slow',
      impact: 'minor',
      resources: [{ id: ids.web, impact: 'major' }, { id: ids.api }],
      message: 'We are **looking** into it. <script>alert(1)</script><img src=x onerror=alert(1)> [x](javascript:alert(1))',
    });
    expect(opened).toMatchObject({
      pageId,
      title: 'Checkout is slow',
      impact: 'minor',
      state: 'investigating',
      sourceIncidentId: null,
      resolvedAt: null,
      resources: [
        { id: ids.api, name: 'api', impact: 'minor' },
        { id: ids.web, name: 'web', impact: 'major' },
      ],
    });
    expect(opened.updates).toHaveLength(1);
    const first = opened.updates[0];
    expect(first).toMatchObject({ state: 'investigating', automatic: false });
    expect(first.messageHtml).toContain('<strong>looking</strong>');
    expect(first.messageHtml).not.toMatch(/<script|onerror|javascript:/);

    const updated = await ok('POST', `${incidents()}/${opened.id}/updates`, {
      state: 'identified',
      message: 'A full disk.',
      impact: 'major',
      resources: [{ id: ids.web }],
    });
    expect(updated).toMatchObject({
      state: 'identified',
      impact: 'major',
      resolvedAt: null,
      resources: [{ id: ids.web, impact: 'major' }],
    });
    const resolved = await ok('POST', `${incidents()}/${opened.id}/updates`, { state: 'resolved', message: 'Disk grown; all good.' });
    expect(resolved.state).toBe('resolved');
    expect(resolved.resolvedAt).not.toBeNull();
    // Newest first, each once.
    expect(resolved.updates.map((u: { state: string }) => u.state)).toEqual(['resolved', 'identified', 'investigating']);
    expect(await ok('GET', `${incidents()}/${opened.id}`)).toEqual(resolved);

    const rows = await outbox(opened.id);
    expect(rows.map((r) => [r.kind, r.update_id])).toEqual(
      [...resolved.updates].reverse().map((u: { id: number }) => ['INCIDENT_UPDATE', u.id]),
    );
    const payload = JSON.parse(rows[2].payload);
    expect(payload).toMatchObject({
      page: { id: pageId, slug: 'main', title: 'Main' },
      incident: { id: opened.id, title: 'Checkout is slow', state: 'resolved', resources: [{ id: ids.web }] },
      update: { id: resolved.updates[0].id, state: 'resolved', message: 'Disk grown; all good.' },
    });

    // Said again, resolved keeps its first time; another state opens it again.
    const again = await ok('POST', `${incidents()}/${opened.id}/updates`, { state: 'resolved', message: 'Still fine.' });
    expect(again.resolvedAt).toBe(resolved.resolvedAt);
    const reopened = await ok('POST', `${incidents()}/${opened.id}/updates`, { state: 'monitoring', message: 'Watching it.' });
    expect(reopened).toMatchObject({ state: 'monitoring', resolvedAt: null });
  });

  it('refuses bad input with 400 naming the field, unknown ids with 404, and writes nothing then', async () => {
    const open = (body: unknown, page = pageId) => call('POST', incidents(page), body);
    const base = { title: 'Down', impact: 'major', message: 'Looking.' };
    const field = async (body: unknown) => fieldsOf(expectProblem(await open(body), 400));
    expect(await field({ impact: 'major', message: 'x' })).toEqual(['title']);
    expect(await field({ title: 'x', message: 'x' })).toEqual(['impact']);
    expect(await field({ title: 'x', impact: 'major' })).toEqual(['message']);
    expect(await field({ ...base, impact: 'huge' })).toEqual(['impact']);
    expect(await field({ ...base, state: 'done' })).toEqual(['state']);
    expect(await field({ ...base, title: '' })).toEqual(['title']);
    expect(await field({ ...base, colour: 'red' })).toEqual(['colour']);
    expect(await field({ ...base, message: 'é'.repeat(40_000) })).toEqual(['message']);
    // HIDDEN groups never show, and a group the page does not list is not on it.
    expect(await field({ ...base, resources: [{ id: ids.vault }] })).toEqual(['resources']);
    expect(await field({ ...base, resources: [{ id: ids.elsewhere }] })).toEqual(['resources']);
    expect(await field({ ...base, resources: [{ id: ids.web }, { id: ids.web }] })).toEqual(['resources']);
    expect(await field({ ...base, resources: [{ id: 987654 }] })).toEqual(['resources']);
    expectProblem(await open(base, 987654), 404);

    const posted = await ok('POST', incidents(), { ...base, resources: [{ id: ids.web }] });
    const update = (body: unknown, path = `${incidents()}/${posted.id}/updates`) => call('POST', path, body);
    expect(fieldsOf(expectProblem(await update({ state: 'identified', message: 'x', resources: [{ id: ids.elsewhere }] }), 400))).toEqual([
      'resources',
    ]);
    expect(fieldsOf(expectProblem(await update({ message: 'x' }), 400))).toEqual(['state']);
    expectProblem(await update({ state: 'identified', message: 'x' }, `${incidents()}/987654/updates`), 404);
    // An incident of another page is not found through this one.
    expectProblem(await update({ state: 'identified', message: 'x' }, `${incidents(otherPageId)}/${posted.id}/updates`), 404);
    expectProblem(await call('GET', `${incidents(otherPageId)}/${posted.id}`), 404);
    // The refused update left the incident, its timeline and the outbox as they were.
    expect(await ok('GET', `${incidents()}/${posted.id}`)).toEqual(posted);
    expect(await outbox(posted.id)).toHaveLength(1);
  });

  it('lists open incidents first, then the newest, and filters by state', async () => {
    const page = (await d.admin.call(operations.createStatusPage, { body: { slug: 'listing', title: 'Listing' } })).id;
    const post = (title: string) => ok('POST', incidents(page), { title, impact: 'minor', message: title });
    const older = await post('older, open');
    const closed = await post('closed');
    await ok('POST', `${incidents(page)}/${closed.id}/updates`, { state: 'resolved', message: 'over' });
    const newer = await post('newer, open');
    const titles = async (query = '') => (await ok('GET', `${incidents(page)}${query}`)).map((i: { title: string }) => i.title);
    expect(await titles()).toEqual(['newer, open', 'older, open', 'closed']);
    expect(await titles('?state=open')).toEqual(['newer, open', 'older, open']);
    expect(await titles('?state=resolved')).toEqual(['closed']);
    expect(await titles('?limit=1')).toEqual(['newer, open']);
    expect(fieldsOf(expectProblem(await call('GET', `${incidents(page)}?state=gone`), 400))).toEqual(['state']);
    expectProblem(await call('GET', incidents(987654)), 404);

    expect(await ok('DELETE', `${incidents(page)}/${older.id}`)).toEqual({ status: 'deleted' });
    expectProblem(await call('DELETE', `${incidents(page)}/${older.id}`), 404);
    expectProblem(await call('GET', `${incidents(page)}/${older.id}`), 404);
    expect(await titles()).toEqual([newer.title, 'closed']);
  });

  it('promotes an automatic incident, keeping its opening and resolution as the start of the timeline', async () => {
    target.set('flaky', 503);
    await d.admin.call(operations.checkResource, { params: { id: ids.flaky } });
    const [auto] = await d.admin.call(operations.listIncidents, { query: { resourceId: ids.flaky, state: 'open' } });
    expect(auto, 'a failing check opened no incident').toBeDefined();

    const promoted = await ok('POST', incidents(), { fromIncidentId: auto.id, message: 'We know; on it.', state: 'identified' });
    expect(promoted).toMatchObject({
      title: 'flaky outage',
      impact: 'major',
      state: 'identified',
      sourceIncidentId: auto.id,
      resolvedAt: null,
      resources: [{ id: ids.flaky, name: 'flaky', impact: 'major' }],
    });
    expect(promoted.createdAt).toBe(auto.openedAt);
    expect(promoted.updates.map((u: { state: string; automatic: boolean }) => [u.state, u.automatic])).toEqual([
      ['identified', false],
      ['investigating', true],
    ]);
    expect(promoted.updates[1].createdAt).toBe(auto.openedAt);
    // Only the public cause, as anonymous visitors see it.
    expect(promoted.updates[1].message).toContain('HTTP 503 Service Unavailable');
    // Readers hear of it once: the newest entry.
    expect((await outbox(promoted.id)).map((r) => r.update_id)).toEqual([promoted.updates[0].id]);
    const twice = expectProblem(await call('POST', incidents(), { fromIncidentId: auto.id }), 409);
    expect(fieldsOf(twice)).toEqual(['fromIncidentId']);

    // Resolved before it is promoted (on another page's copy): both entries, resolved, with the automatic times.
    target.set('flaky', 200);
    await d.admin.call(operations.checkResource, { params: { id: ids.flaky } });
    const over = await d.admin.call(operations.getIncident, { params: { id: auto.id } });
    expect(over.resolvedAt).not.toBeNull();
    const copy = await d.admin.call(operations.createStatusPage, { body: { slug: 'copy', title: 'Copy' } });
    const past = await ok('POST', incidents(copy.id), { fromIncidentId: auto.id, title: 'Flaky was down' });
    expect(past).toMatchObject({ title: 'Flaky was down', state: 'resolved', resolvedAt: over.resolvedAt });
    expect(past.updates.map((u: { state: string; automatic: boolean; createdAt: string }) => [u.state, u.automatic, u.createdAt])).toEqual([
      ['resolved', true, over.resolvedAt],
      ['investigating', true, over.openedAt],
    ]);

    expect(fieldsOf(expectProblem(await call('POST', incidents(), { fromIncidentId: 987654 }), 400))).toEqual(['fromIncidentId']);
    // Its resource is not on the other page.
    expect(fieldsOf(expectProblem(await call('POST', incidents(otherPageId), { fromIncidentId: auto.id }), 400))).toEqual([
      'fromIncidentId',
    ]);
  });

  it('shows maintenance windows on a page with their own text', async () => {
    const now = Date.now();
    const at = (ms: number) => new Date(ms).toISOString();
    const window = await d.admin.call(operations.createMaintenanceWindow, {
      body: { name: 'Disk swap', kind: 'ONE_OFF', startsAt: at(now + 3_600_000), endsAt: at(now + 7_200_000), resourceIds: [ids.web] },
    });
    const notices = `/admin/api/status-pages/${pageId}/maintenance-notices`;
    const created = await ok('POST', notices, { windowId: window.id, title: 'Disks', message: 'We swap *disks*.<script>x</script>' });
    expect(created).toMatchObject({ pageId, windowId: window.id, title: 'Disks', message: 'We swap *disks*.<script>x</script>' });
    expect(created.messageHtml).toBe('<p>We swap <em>disks</em>.</p>\n');
    const rows = await db.query<OutboxRow>("SELECT kind, payload FROM subscriber_messages WHERE kind = 'MAINTENANCE'");
    expect(rows).toHaveLength(1);
    expect(JSON.parse(rows[0].payload)).toMatchObject({ notice: { id: created.id }, window: { id: window.id, name: 'Disk swap' } });

    expect(fieldsOf(expectProblem(await call('POST', notices, { windowId: window.id, title: 'Again', message: 'x' }), 409))).toEqual([
      'windowId',
    ]);
    expect(fieldsOf(expectProblem(await call('POST', notices, { windowId: 987654, title: 'x', message: 'x' }), 400))).toEqual(['windowId']);
    expect(fieldsOf(expectProblem(await call('POST', notices, { windowId: window.id, message: 'x' }), 400))).toEqual(['title']);

    const changed = await ok('PATCH', `${notices}/${created.id}`, { message: 'Swapping disks.' });
    expect(changed).toMatchObject({ title: 'Disks', message: 'Swapping disks.', messageHtml: '<p>Swapping disks.</p>\n' });
    expect(await ok('GET', notices)).toEqual([changed]);
    expectProblem(await call('PATCH', `/admin/api/status-pages/${otherPageId}/maintenance-notices/${created.id}`, { title: 'x' }), 404);
    expect(await ok('DELETE', `${notices}/${created.id}`)).toEqual({ status: 'deleted' });
    expect(await ok('GET', notices)).toEqual([]);
    expectProblem(await call('DELETE', `${notices}/${created.id}`), 404);
  });

  it('is ADMIN only', async () => {
    expectProblem(await sendJson(d.url, 'GET', incidents(), undefined, {}), 401);
    expectProblem(await call('GET', incidents(), undefined, userKey), 403);
    expectProblem(await call('POST', incidents(), { title: 'x', impact: 'minor', message: 'x' }, userKey), 403);
  });
});
