import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { buildLayout, type Layout, push } from '../probes/helpers/images.ts';
import { type Registry, startRegistry } from '../probes/helpers/registry.ts';
import { type Caller, call, ok } from './helpers.ts';

/**
 * The DOCKER rows of the seed's state table through the API: a private
 * registry on loopback (Debian's docker-registry, htpasswd), an image pushed
 * with skopeo, and the credential stored through `/admin/api/registry-credentials`.
 */
describe('DOCKER checks through the API', () => {
  let d: TestDaemon;
  let admin: Caller;
  let layout: Layout;
  let reg: Registry;
  const cred = { username: 'robot', password: 'robot-password-1' };

  beforeAll(async () => {
    layout = buildLayout();
    [d, reg] = await Promise.all([startDaemon(), startRegistry({ kind: 'htpasswd', ...cred })]);
    admin = { kind: 'key', token: d.adminKey };
    await push(layout, 'app', `${reg.host}/private/app:1`, { creds: `${cred.username}:${cred.password}` });
  }, 60_000);
  afterAll(async () => {
    await Promise.all([d?.stop(), reg?.stop()]);
    layout?.remove();
  });

  it('is NOT_AVAILABLE with DOCKER_ERROR without a credential, AVAILABLE once one is stored, and again without it', async () => {
    const r = await ok(
      call(d, admin, 'POST', '/api/resources', {
        name: 'private-app',
        resourceType: 'DOCKER',
        target: `${reg.host}/private/app:1`,
        active: false,
      }),
    );
    expect(await ok(call(d, admin, 'POST', `/api/resources/${r.id}/check`))).toMatchObject({
      status: 'NOT_AVAILABLE',
      errorCode: 'DOCKER_ERROR',
    });

    const c = await ok(call(d, admin, 'POST', '/admin/api/registry-credentials', { registry: reg.host, ...cred }));
    const up = await ok(call(d, admin, 'POST', `/api/resources/${r.id}/check`));
    expect(up).toMatchObject({ status: 'AVAILABLE', errorCode: null });
    expect(await ok(call(d, admin, 'GET', `/admin/api/resources/${r.id}`))).toMatchObject({
      latestCheckStatus: 'AVAILABLE',
      latestErrorCode: null,
    });

    await ok(call(d, admin, 'DELETE', `/admin/api/registry-credentials/${c.id}`));
    expect(await ok(call(d, admin, 'POST', `/api/resources/${r.id}/check`))).toMatchObject({
      status: 'NOT_AVAILABLE',
      errorCode: 'DOCKER_ERROR',
    });
  });

  it('a recursive namespace target is accepted and checked', async () => {
    await ok(call(d, admin, 'POST', '/admin/api/registry-credentials', { registry: reg.host, ...cred }));
    const r = await ok(
      call(d, admin, 'POST', '/api/resources', {
        name: 'private-ns',
        resourceType: 'DOCKER',
        target: `${reg.host}/private`,
        recursive: true,
        active: false,
      }),
    );
    expect(r.recursive).toBe(true);
    expect(await ok(call(d, admin, 'POST', `/api/resources/${r.id}/check`))).toMatchObject({ status: 'AVAILABLE' });
  });
});
