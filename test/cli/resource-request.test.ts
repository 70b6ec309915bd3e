import { describe, expect, it } from 'vitest';
import { useRequestTarget, writeIn } from './request-target.ts';
import { useAdminCli } from './run.ts';

/**
 * `resources add|update|get` with the request fields (README.md#the-request-what-a-check-sends):
 * each flag reaches the daemon and `get` shows it; secrets come from stdin (the CLI's stdin is a
 * pipe here, as in a script) and never appear in argv, the CLI's output or `get -o json`; bad
 * values exit 2 naming the flag; update removes what it set.
 */
const cli = useAdminCli();
const { monctl } = cli;

const HEADER_SECRET = 'hdr-secret-7f3a91';
const PASSWORD = 'pw-secret-c04e22';
const TOKEN = 'tok-secret-5b8d10';
const SECRETS = [HEADER_SECRET, PASSWORD, TOKEN];

const target = useRequestTarget('/health');
const seen = target.seen;
const file = (name: string, text: string) => writeIn(cli.home.dir, name, text);
const noSecrets = (...texts: string[]) => {
  for (const text of texts) for (const s of SECRETS) expect(text).not.toContain(s);
};

// Each test runs several CLI processes (about a second each, more on a busy machine).
describe('resources add|update|get: the request fields', { timeout: 90_000 }, () => {
  it('each flag reaches the daemon and get shows it; the secrets come from stdin, one line each, and are never shown', async () => {
    const args = [
      'resources',
      'add',
      'req',
      '--target',
      target.url,
      '--inactive',
      '--method',
      'post',
      '--header',
      'X-Env=prod',
      '--secret-header',
      'X-Api-Key',
      '--body',
      `@${file('body.json', '{"ping":1}')}`,
      '--content-type',
      'application/json',
      '--basic-auth',
      'alice',
      '--timeout',
      '5s',
      '--expect-status',
      '200,301',
      '--expect-status',
      '400-404',
      '--no-follow-redirects',
    ];
    const add = await monctl(args, { input: `${HEADER_SECRET}\n${PASSWORD}\n` });
    expect(add.code, add.stderr).toBe(0);
    noSecrets(args.join(' '), add.stdout, add.stderr);

    const got = await monctl(['resources', 'get', 'req', '-o', 'json']);
    noSecrets(got.stdout);
    expect(got.json()).toMatchObject({
      method: 'POST',
      headers: { 'X-Env': 'prod' },
      body: '{"ping":1}',
      contentType: 'application/json',
      auth: { type: 'basic', username: 'alice' },
      followRedirects: false,
      expectStatus: ['200', '301', '400-404'],
      timeoutSeconds: 5,
      upsideDown: false,
      secrets: { headers: ['X-Api-Key'], clientCert: false },
    });
    const shown = await monctl(['resources', 'get', 'req']);
    noSecrets(shown.stdout);
    for (const line of [
      /METHOD\tPOST/,
      /HEADERS\tX-Env: prod/,
      /SECRET HEADERS\tX-Api-Key \(set\)/,
      /BODY\t"\{\\"ping\\":1\}" \(application\/json\)/,
      /AUTH\tbasic: user alice, password set/,
      /CLIENT CERT\tnot set/,
      /TIMEOUT\t5s/,
      /REDIRECTS\tnot followed/,
      /EXPECT STATUS\t200,301,400-404/,
    ])
      expect(shown.stdout).toMatch(line);

    // Ten more columns are too many for a list: `get` only.
    const wide = await monctl(['resources', 'list', '-o', 'wide']);
    expect(wide.stdout.split('\n')[0]).toMatch(/CONDITIONS/);
    expect(wide.stdout.split('\n')[0]).not.toMatch(/METHOD|SECRET HEADERS/);

    // The check sends what was typed: the secrets read from stdin reach the target.
    seen.length = 0;
    const check = await monctl(['resources', 'check', 'req']);
    expect(check.code, check.stderr).toBe(0);
    noSecrets(check.stdout, check.stderr);
    expect(seen[0]).toMatchObject({ method: 'POST', body: '{"ping":1}' });
    expect(seen[0].headers).toMatchObject({
      'x-env': 'prod',
      'x-api-key': HEADER_SECRET,
      'content-type': 'application/json',
      authorization: `Basic ${Buffer.from(`alice:${PASSWORD}`).toString('base64')}`,
    });
  });

  it('a bearer token from a file, a client certificate and key from files: set, never shown', async () => {
    const client = target.pki.issue('client', 11);
    const add = await monctl([
      'resources',
      'add',
      'mtls',
      '--target',
      target.url.replace('http:', 'https:'),
      '--inactive',
      '--bearer-token-file',
      file('token', `${TOKEN}\n`),
      '--client-cert',
      client.certFile,
      '--client-key',
      client.keyFile,
    ]);
    expect(add.code, add.stderr).toBe(0);
    const got = await monctl(['resources', 'get', 'mtls', '-o', 'json']);
    noSecrets(got.stdout);
    expect(got.stdout).not.toContain('PRIVATE KEY');
    expect(got.json()).toMatchObject({ auth: { type: 'bearer' }, secrets: { headers: [], clientCert: true } });
    const shown = await monctl(['resources', 'get', 'mtls']);
    expect(shown.stdout).toMatch(/AUTH\tbearer: token set/);
    expect(shown.stdout).toMatch(/CLIENT CERT\tset/);
    const removed = await monctl(['resources', 'update', 'mtls', '--no-client-cert', '--no-auth', '-o', 'json']);
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.json()).toMatchObject({ auth: null, secrets: { clientCert: false } });
  });

  it('update merges headers, removes plain and secret ones, and sets every field back to the default', async () => {
    const more = await monctl(['resources', 'update', 'req', '--header', 'X-More=1', '--upside-down', '-o', 'json']);
    expect(more.code, more.stderr).toBe(0);
    expect(more.json()).toMatchObject({ headers: { 'X-Env': 'prod', 'X-More': '1' }, upsideDown: true });
    const args = ['resources', 'update', 'req', '--remove-header', 'X-Env', '--remove-header', 'x-api-key', '--no-body'];
    args.push('--no-auth', '--no-timeout', '--no-expect-status', '--follow-redirects', '--method', 'GET', '--no-upside-down', '-o', 'json');
    const cleared = await monctl(args);
    expect(cleared.code, cleared.stderr).toBe(0);
    expect(cleared.json()).toMatchObject({
      method: 'GET',
      headers: { 'X-More': '1' },
      body: null,
      contentType: null,
      auth: null,
      followRedirects: true,
      expectStatus: ['200-299'],
      timeoutSeconds: null,
      upsideDown: false,
      secrets: { headers: [], clientCert: false },
    });
    // A plain header made secret in one update (and back).
    const moved = await monctl(['resources', 'update', 'req', '--remove-header', 'X-More', '--secret-header', 'X-More', '-o', 'json'], {
      input: `${HEADER_SECRET}\n`,
    });
    expect(moved.code, moved.stderr).toBe(0);
    expect(moved.json()).toMatchObject({ headers: {}, secrets: { headers: ['X-More'] } });
    const back = await monctl(['resources', 'update', 'req', '--remove-header', 'X-More', '--header', 'X-More=2', '-o', 'json']);
    expect(back.json()).toMatchObject({ headers: { 'X-More': '2' }, secrets: { headers: [] } });
    noSecrets(moved.stdout, back.stdout);
  });

  it('bad values exit 2 naming the flag, before any request; a secret is never taken from a flag, nor repeated', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['--timeout', '0s'], /--timeout must be a duration of whole seconds from 1s to 120s/],
      [['--timeout', '121s'], /--timeout must be/],
      [['--timeout', '1500ms'], /--timeout must be/],
      [['--timeout', 'soon'], /--timeout must be/],
      [['--expect-status', '600'], /--expect-status takes status codes/],
      [['--expect-status', '299-200'], /--expect-status takes status codes/],
      [['--method', 'FETCH'], /--method must be one of GET, HEAD/],
      [['--header', 'NoValue'], /--header takes name=value/],
      [['--header', 'Bad Name=x'], /--header needs a header name/],
      [['--client-cert', '/nonexistent.pem'], /--client-cert and --client-key go together/],
      [['--body', '@/nonexistent/body'], /--body: cannot read \/nonexistent\/body: ENOENT/],
      [['--bearer-token-file', '/nonexistent/token'], /--bearer-token-file: cannot read/],
      [['--basic-auth', 'bob', '--bearer-token-file', '/x'], /give one of --basic-auth, --bearer-token-file and --no-auth/],
      [['--basic-auth', `bob:${PASSWORD}`], /--basic-auth: the user name must not hold a colon/],
      [['--secret-header', `X-Api-Key=${HEADER_SECRET}`], /--secret-header takes the header name only/],
      [['--header', 'X-A=1', '--secret-header', 'x-a'], /header x-a is named twice \(a header is plain, --header, or secret/],
    ];
    // Four CLI processes at a time: sixteen one after the other take most of the test's timeout on a busy machine.
    for (let i = 0; i < cases.length; i += 4) {
      const batch = cases.slice(i, i + 4);
      const results = await Promise.all(
        batch.map(([flags]) => monctl(['resources', 'add', 'bad', '--target', target.url, '--inactive', ...flags])),
      );
      results.forEach((res, j) => {
        const [flags, message] = batch[j];
        expect(res.code, `${flags.join(' ')}: ${res.stderr}`).toBe(2);
        expect(res.stderr).toMatch(message);
        noSecrets(res.stdout, res.stderr);
      });
    }
    const updated = await monctl(['resources', 'update', 'req', '--timeout', '2m30s']);
    expect(updated.code).toBe(2);
    expect(updated.stderr).toMatch(/--timeout must be/);
    expect((await monctl(['resources', 'list', '-o', 'json'])).json().map((r: { name: string }) => r.name)).not.toContain('bad');
  });

  it('a secret expected on stdin and missing is a usage error naming it', async () => {
    const res = await monctl(
      ['resources', 'add', 'nosecret', '--target', target.url, '--inactive', '--secret-header', 'X-A', '--basic-auth', 'u'],
      {
        input: 'only-one-line\n',
      },
    );
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/expected 2 lines on stdin \(Value of header X-A; Password of u\): Password of u is missing/);
    expect(res.stderr).not.toContain('only-one-line');
  });

  it("the daemon's 400 names the flag typed, not the API's field", async () => {
    const host = await monctl(['resources', 'add', 'host', '--target', target.url, '--inactive', '--header', 'Host=example.com']);
    expect(host.code).toBe(1);
    expect(host.stderr).toMatch(/--header.*Host is set by the HTTP client itself/);
    expect(host.stderr).not.toMatch(/\bheaders\b/);
    // A key of a map field (`headers.X-Long`) reads as the flag and the key.
    const long = await monctl(['resources', 'add', 'long', '--target', target.url, '--inactive', '--header', `X-Long=${'v'.repeat(8200)}`]);
    expect(long.code).toBe(1);
    expect(long.stderr).toMatch(/--header X-Long: /);
    expect(long.stderr).not.toMatch(/headers\.X-Long/);
    const tcp = await monctl(['resources', 'add', 'tcp', '--type', 'TCP', '--target', '127.0.0.1:9', '--inactive', '--method', 'POST']);
    expect(tcp.code).toBe(1);
    expect(tcp.stderr).toMatch(/--method/);
  });
});
