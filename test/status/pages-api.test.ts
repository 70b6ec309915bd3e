import { describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { startDaemon } from '../helpers/daemon.ts';
import { bearer, expectProblem, fieldsOf, send } from '../helpers/http.ts';
import { afterAll, beforeAll } from 'vitest';
import type { TestDaemon } from '../helpers/daemon.ts';

/** `/admin/api/status-pages`: ADMIN CRUD with problems naming the field. */
describe('status pages: the admin API', () => {
  let d: TestDaemon;
  let userKey: string;
  let groupId: number;
  beforeAll(async () => {
    d = await startDaemon();
    userKey = (await d.admin.call(operations.createApiKey, { body: { name: 'user', role: 'USER' } })).token;
    groupId = (await d.admin.call(operations.createGroup, { body: { name: 'Website', visibility: 'PUBLIC' } })).id;
  });
  afterAll(async () => {
    await d?.stop();
  });
  const post = (body: unknown, token = d.adminKey) =>
    send(d.url, 'POST', '/admin/api/status-pages', {
      headers: { ...bearer(token), 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const patch = (id: number, body: unknown) =>
    send(d.url, 'PATCH', `/admin/api/status-pages/${id}`, {
      headers: { ...bearer(d.adminKey), 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  it('creates, lists, reads, changes and deletes a page', async () => {
    const created = await post({ slug: 'main', title: 'Example status', groupIds: [groupId], customHostname: 'Status.Example.COM.' });
    expect(created.status, created.text).toBe(200);
    const page = created.json();
    expect(page).toMatchObject({
      slug: 'main',
      title: 'Example status',
      description: null,
      groupIds: [groupId],
      showAnnouncements: true,
      showIncidents: true,
      customHostname: 'status.example.com',
      httpsRedirect: false,
      footer: null,
    });
    const list = await d.admin.call(operations.listStatusPages);
    expect(list.map((p) => p.slug)).toEqual(['main']);
    expect(await d.admin.call(operations.getStatusPage, { params: { id: page.id } })).toEqual(page);

    const changed = await patch(page.id, { title: 'Status', showIncidents: false, customHostname: null, footer: 'ops@example.com' });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.json()).toMatchObject({
      slug: 'main',
      title: 'Status',
      showIncidents: false,
      customHostname: null,
      footer: 'ops@example.com',
      groupIds: [groupId],
    });
    expect((await patch(page.id, { httpsRedirect: true })).json()).toMatchObject({
      httpsRedirect: true,
      title: 'Status',
      footer: 'ops@example.com',
    });
    expect((await patch(page.id, { title: 'Status again' })).json()).toMatchObject({ httpsRedirect: true });

    expect((await send(d.url, 'DELETE', `/admin/api/status-pages/${page.id}`, { headers: bearer(d.adminKey) })).json()).toEqual({
      status: 'deleted',
    });
    expectProblem(await send(d.url, 'DELETE', `/admin/api/status-pages/${page.id}`, { headers: bearer(d.adminKey) }), 404);
    expectProblem(await send(d.url, 'GET', `/admin/api/status-pages/${page.id}`, { headers: bearer(d.adminKey) }), 404);
  });

  it('refuses bad fields with 400 naming them, and taken slugs and hostnames with 409', async () => {
    expect(fieldsOf(expectProblem(await post({ slug: 'Not a slug', title: 'x' }), 400))).toEqual(['slug']);
    expect(fieldsOf(expectProblem(await post({ slug: '-x', title: 'x' }), 400))).toEqual(['slug']);
    expect(fieldsOf(expectProblem(await post({ slug: 'x' }), 400))).toEqual(['title']);
    expect(fieldsOf(expectProblem(await post({ slug: 'x', title: 'x', groupIds: [groupId, 987654] }), 400))).toEqual(['groupIds']);
    expect(fieldsOf(expectProblem(await post({ slug: 'x', title: 'x', customHostname: 'not a host!' }), 400))).toEqual(['customHostname']);
    expect(fieldsOf(expectProblem(await post({ slug: 'x', title: 'x', colour: 'red' }), 400))).toEqual(['colour']);

    const first = (await post({ slug: 'one', title: 'One', customHostname: 'status.example.org' })).json();
    expect(fieldsOf(expectProblem(await post({ slug: 'one', title: 'Again' }), 409))).toEqual(['slug']);
    expect(fieldsOf(expectProblem(await post({ slug: 'two', title: 'Two', customHostname: 'STATUS.example.org' }), 409))).toEqual([
      'customHostname',
    ]);
    const second = (await post({ slug: 'two', title: 'Two' })).json();
    expect(fieldsOf(expectProblem(await patch(second.id, { slug: 'one' }), 409))).toEqual(['slug']);
    expect(fieldsOf(expectProblem(await patch(second.id, { customHostname: 'status.example.org' }), 409))).toEqual(['customHostname']);
    expectProblem(await patch(987654, { title: 'x' }), 404);
    // A page keeps its own hostname on a change of something else.
    expect((await patch(first.id, { title: 'One again', customHostname: 'status.example.org' })).status).toBe(200);
  });

  it('is ADMIN only', async () => {
    expectProblem(await send(d.url, 'GET', '/admin/api/status-pages'), 401);
    expectProblem(await send(d.url, 'GET', '/admin/api/status-pages', { headers: bearer(userKey) }), 403);
    expectProblem(await post({ slug: 'user', title: 'x' }, userKey), 403);
  });
});
