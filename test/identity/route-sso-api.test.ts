import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sameHostPath } from '../../daemon/tunnel/access/sso-gate.ts';
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
    for (const evil of ['//evil.example/x', '/\\evil.example', 'https://evil.example/', 'evil', '/x\r\nSet-Cookie: a=b'])
      expect(sameHostPath(evil), evil).toBe('/');
  });
});
