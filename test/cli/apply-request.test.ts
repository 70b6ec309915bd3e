import { describe, expect, it } from 'vitest';
import { useRequestTarget, writeIn } from './request-target.ts';
import { useAdminCli } from './run.ts';

/**
 * `monctl apply -f` with the request fields of resources: secrets only as ${ENV_VAR} references
 * (a literal is refused, an unset variable named), sent on every run without counting as a
 * change, so that a second apply of the same file reports no changes; the target receives them.
 */
const cli = useAdminCli();
const { monctl } = cli;

const KEY_1 = 'key-one-9c1e7d';
const KEY_2 = 'key-two-44aa0f';
const PW = 'pw-apply-31b6e2';

const target = useRequestTarget('/');
const seen = target.seen;
const file = (name: string, text: string) => writeIn(cli.home.dir, name, text);
const spec = (env: string) =>
  file(
    'request.yaml',
    `resources:
  - name: applied-req
    type: HTTP
    target: ${target.url}
    active: false
    method: POST
    headers: { X-Env: ${env} }
    secretHeaders: { X-Api-Key: "\${API_KEY}" }
    auth: { type: basic, username: alice, password: "\${API_PW}" }
    body: '{"ping":1}'
    contentType: application/json
    expectStatus: [200, "300-399"]
    timeoutSeconds: 7
`,
  );
const apply = (path: string, key = KEY_1, extra: string[] = []) =>
  monctl(['apply', '-f', path, ...extra], { env: { API_KEY: key, API_PW: PW } });
const noSecrets = (...texts: string[]) => {
  for (const t of texts) for (const s of [KEY_1, KEY_2, PW]) expect(t).not.toContain(s);
};
/** The headers the target receives from a check now. */
async function checkSees() {
  seen.length = 0;
  const check = await monctl(['resources', 'check', 'applied-req']);
  expect(check.code, check.stderr).toBe(0);
  return seen[0].headers;
}

// Each test runs several CLI processes (about a second each, more on a busy machine).
describe('apply -f: the request fields of resources', { timeout: 90_000 }, () => {
  it('creates them with the secrets from the environment; the target receives them; reads never show them', async () => {
    const first = await apply(spec('prod'));
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/\+ create resource applied-req/);
    const got = await monctl(['resources', 'get', 'applied-req', '-o', 'json']);
    noSecrets(first.stdout, first.stderr, got.stdout);
    expect(got.json()).toMatchObject({
      method: 'POST',
      headers: { 'X-Env': 'prod' },
      auth: { type: 'basic', username: 'alice' },
      body: '{"ping":1}',
      contentType: 'application/json',
      expectStatus: ['200', '300-399'],
      timeoutSeconds: 7,
      secrets: { headers: ['X-Api-Key'], clientCert: false },
    });
    expect(await checkSees()).toMatchObject({
      'x-api-key': KEY_1,
      authorization: `Basic ${Buffer.from(`alice:${PW}`).toString('base64')}`,
    });
  });

  it('a second apply of the same file reports no changes, and still sends the secrets (a new value arrives)', async () => {
    const again = await apply(spec('prod'));
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toBe(
      'No changes: the daemon already matches the file.\nSecrets were sent again (reads never show them to compare): resource applied-req.\n',
    );
    const json = await apply(spec('prod'), KEY_1, ['-o', 'json']);
    expect(json.json()).toEqual({ dryRun: false, changes: [], secretsSent: ['resource applied-req'] });
    // A rotated secret: nothing the daemon shows changes, but the check sends the new value.
    const rotated = await apply(spec('prod'), KEY_2);
    expect(rotated.stdout).toMatch(/^No changes/);
    noSecrets(again.stdout, json.stdout, rotated.stdout, rotated.stderr);
    expect((await checkSees())['x-api-key']).toBe(KEY_2);
  });

  it('a change the daemon shows is an update listing it; null removes a field', async () => {
    const changed = await apply(spec('staging'));
    expect(changed.stdout).toMatch(/~ update resource applied-req \(headers, secrets sent\)/);
    expect(changed.stdout).toMatch(/1 updated/);
    expect((await monctl(['resources', 'get', 'applied-req', '-o', 'json'])).json().headers).toEqual({ 'X-Env': 'staging' });
    const path = file(
      'removed.yaml',
      `resources:\n  - name: applied-req\n    type: HTTP\n    target: ${target.url}\n    active: false\n    auth: null\n    body: null\n    contentType: null\n    expectStatus: null\n    secretHeaders: {}\n`,
    );
    const removed = await apply(path);
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.stdout).toMatch(/~ update resource applied-req \(body, contentType, expectStatus, secretHeaders, auth\)/);
    expect((await monctl(['resources', 'get', 'applied-req', '-o', 'json'])).json()).toMatchObject({
      auth: null,
      body: null,
      expectStatus: ['200-299'],
      secrets: { headers: [] },
    });
    expect((await apply(path)).stdout).toBe('No changes: the daemon already matches the file.\n');
  });

  it('a client certificate and key come from environment variables holding the PEM', async () => {
    const client = target.pki.issue('apply-client', 21);
    const path = file(
      'mtls.yaml',
      `resources:\n  - name: applied-mtls\n    type: HTTP\n    target: ${target.url.replace('http:', 'https:')}\n    active: false\n    clientCert: \${CERT}\n    clientKey: \${KEY}\n`,
    );
    const env = { CERT: client.cert, KEY: client.key };
    const first = await monctl(['apply', '-f', path], { env });
    expect(first.code, first.stderr).toBe(0);
    expect((await monctl(['resources', 'get', 'applied-mtls', '-o', 'json'])).json().secrets.clientCert).toBe(true);
    const again = await monctl(['apply', '-f', path], { env });
    expect(again.stdout).toMatch(/^No changes: .*\nSecrets were sent again .*resource applied-mtls\.\n$/);
    expect(again.stdout + again.stderr).not.toContain('PRIVATE KEY');
  });

  it('refuses literal secrets, unset variables and HTTP fields on a TCP resource, naming each; nothing changes', async () => {
    const path = file(
      'bad.yaml',
      `resources:
  - name: bad-req
    type: HTTP
    target: ${target.url}
    secretHeaders: { X-Api-Key: literal-secret-0d9e }
    auth: { type: bearer, token: "\${UNSET_TOKEN_VAR}" }
    headers: { X-Token: "\${API_KEY}" }
    timeoutSeconds: 500
  - name: bad-tcp
    type: TCP
    target: 127.0.0.1:9
    method: POST
`,
    );
    const res = await monctl(['apply', '-f', path], { env: { API_KEY: KEY_1 } });
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/resources\[0\]\.secretHeaders\.X-Api-Key: is a secret: write it as a \$\{ENV_VAR\} reference/);
    expect(res.stderr).toMatch(/resources\[0\]\.auth\.token: environment variable UNSET_TOKEN_VAR is not set/);
    expect(res.stderr).toMatch(/resources\[0\]\.headers\.X-Token: is not expanded: a secret value goes in secretHeaders/);
    expect(res.stderr).toMatch(/resources\[0\]\.timeoutSeconds: must be an integer from 1 to 120/);
    expect(res.stderr).toMatch(/resources\[1\]\.method: is for HTTP resources/);
    expect(res.stderr).not.toContain('literal-secret-0d9e');
    noSecrets(res.stderr);
    const names = (await monctl(['resources', 'list', '-o', 'json'])).json().map((r: { name: string }) => r.name);
    expect(names).not.toContain('bad-req');
  });
});
