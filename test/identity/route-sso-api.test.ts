import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { SecretBox } from '../../daemon/auth/secret-box.ts';
import { sameHostPath } from '../../daemon/tunnel/access/sso-gate.ts';
import { MAX_COOKIE_VALUE, type RouteSession, sealSession } from '../../daemon/tunnel/access/sso-session.ts';
import { operations } from '../../src/api/operations.ts';
import { HttpError } from '../../src/errors.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';

/** `auth: oidc` on a daemon without single sign-on, and the return path after a sign-in. */
describe('identity: route sign-in without --oidc-issuer', () => {
  let daemon: TestDaemon;
  beforeAll(async () => {
    daemon = await startDaemon();
  });
  afterAll(async () => {
    await daemon?.stop();
  });

  it('refuses auth oidc with a 400 naming auth; other auth modes keep working', async () => {
    const agent = await daemon.admin.call(operations.createAgent, { body: { name: 'edge' } });
    const body = { name: 'app', type: 'HTTP' as const, agentId: agent.id, target: 'http://127.0.0.1:1', hostname: 'app.test' };
    const refused = await daemon.admin
      .call(operations.createRoute, { body: { ...body, auth: 'oidc', sso: { domains: ['example.com'] } } })
      .catch((e: HttpError) => e);
    expect(refused).toBeInstanceOf(HttpError);
    expect((refused as HttpError).status).toBe(400);
    expect((refused as HttpError).errors?.[0]?.field).toBe('auth');
    const plain = await daemon.admin.call(operations.createRoute, { body });
    expect(plain).toMatchObject({ auth: 'none', sso: null });
  });

  it('comes back only to a path of the same host (never //host, /\\host or a URL)', () => {
    expect(sameHostPath('/app/page?x=1')).toBe('/app/page?x=1');
    const dotted = ['/.//evil.example', '/a/../..//evil.example/x', '/%2e//evil.example']; // resolve to //evil.example
    for (const evil of ['//evil.example/x', '/\\evil.example', 'https://evil.example/', 'evil', '/x\r\nSet-Cookie: a=b', ...dotted])
      expect(sameHostPath(evil), evil).toBe('/');
  });

  it('keeps the session cookie under 4 KB whatever the groups, keeping those the rules name', () => {
    const box = new SecretBox(randomBytes(32), 'route-sessions');
    const groups = Array.from({ length: 2000 }, (_, i) => `group-with-a-long-name-${i}`);
    const session: RouteSession = {
      host: 'app.test',
      issuer: 'https://id.example',
      subject: 'alice',
      email: 'alice@example.com',
      emailVerified: true,
      name: 'Alice',
      username: 'alice@example.com',
      groups,
      issuedAt: 0,
      expiresAt: 1,
    };
    const sealed = sealSession(box, session, new Set(['group-with-a-long-name-1999', 'ops']));
    expect(sealed.length).toBeLessThanOrEqual(MAX_COOKIE_VALUE);
    expect(JSON.parse(box.open(sealed)!).groups).toEqual(['group-with-a-long-name-1999']);
    const small = sealSession(box, { ...session, groups: ['ops', 'dev'] }, new Set());
    expect(JSON.parse(box.open(small)!).groups).toEqual(['ops', 'dev']);
  });
});
