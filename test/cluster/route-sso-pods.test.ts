import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { signInAtProvider, startOidcProvider, type TestOidcProvider } from '../helpers/oidc-provider.ts';
import { agentSlot } from '../helpers/tls.ts';
import { echoTarget, HTML, setCookies, signIn, ssoArgs, ssoEnv } from '../identity/route-sso-world.ts';
import { edge, startAgent, type TestAgent, until } from '../tunnel/helpers.ts';
import { type Pods, startPods } from './pods.ts';

/**
 * Route sign-in across pods: the session cookie and the sign-in under way are sealed with the
 * install secret every pod shares, so a session from pod A's edge works at pod B's, and a sign-in
 * started at one pod completes at the other. Nothing of it is stored.
 */
describe('route sign-in across pods', () => {
  let provider: TestOidcProvider;
  let cluster: Pods;
  let target: Awaited<ReturnType<typeof echoTarget>>;
  let agent: TestAgent;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'monctl-pods-sso-'));
    provider = await startOidcProvider();
    target = await echoTarget();
    cluster = await startPods(2, { args: ssoArgs(provider.issuer), env: ssoEnv(provider.client.clientSecret) });
    // Both pods serve app.test on the same name (behind one DNS name, as in production).
    provider.allowRedirect('http://app.test/.monctl/sso/callback');
  }, 60_000);
  afterAll(async () => {
    await agent?.stop('SIGKILL');
    await cluster?.stop();
    await target?.close();
    await provider?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("a session from pod A's edge works at pod B's; a sign-in started at B completes at A", async () => {
    const [a, b] = ['pod-a', 'pod-b'].map((name) => cluster.pod(name));
    const slot = await agentSlot(a, 'office', dir);
    await a.admin.call(operations.createRoute, {
      body: {
        name: 'app',
        type: 'HTTP',
        agentId: slot.id,
        target: target.url,
        hostname: 'app.test',
        auth: 'oidc',
        sso: { groups: ['ops'] },
      },
    });
    agent = startAgent(a.url, slot.tokenFile);
    await until(async () => (await a.admin.call(operations.getAgent, { params: { id: slot.id } })).status === 'CONNECTED', 100);
    // Pod B learns of the route through the database: its edge redirects once it has it.
    await until(async () => (await edge(b.edgeUrl, 'app.test', 'GET', '/', undefined, HTML)).status === 302, 100);

    const { cookie, callback } = await signIn(a.edgeUrl, 'app.test', '/page', 'bob');
    expect(callback.status, callback.text).toBe(302);
    const atB = await edge(b.edgeUrl, 'app.test', 'GET', '/page', undefined, { cookie });
    expect(atB.status, atB.text).toBe(200);
    expect(JSON.parse(atB.text).headers['x-auth-request-email']).toBe('bob@example.com');
    expect((await edge(b.edgeUrl, 'app.test', 'GET', '/page')).status).toBe(401);

    const started = await edge(b.edgeUrl, 'app.test', 'GET', '/from-b', undefined, HTML);
    const [tx] = setCookies(started.headers);
    const back = new URL(await signInAtProvider(String(started.headers.location), 'alice'));
    const done = await edge(a.edgeUrl, 'app.test', 'GET', back.pathname + back.search, undefined, { cookie: `${tx!.name}=${tx!.value}` });
    expect(done.status, done.text).toBe(302);
    expect(done.headers.location).toBe('/from-b');
  }, 60_000);
});
