import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { runMonctl, tempHome } from '../cli/run.ts';
import { ROOT, startDaemon } from '../helpers/daemon.ts';
import { bearer, login, send } from '../helpers/http.ts';

const home = tempHome();
afterAll(() => home.cleanup());

let n = 0;
/** A config file with this text in its own folder of the temp home. */
function configFile(text: string): string {
  const dir = join(home.dir, `cfg-${++n}`);
  mkdirSync(dir);
  const file = join(dir, 'monctl.yaml');
  writeFileSync(file, text);
  return file;
}

const printConfig = (args: string[], env: Record<string, string> = {}) => runMonctl(['daemon', '--print-config', ...args], { env });

/** `key: value  # source` lines of --print-config, by key. */
function sourcesOf(stdout: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of stdout.matchAll(/^(?:# )?(\w+): .*? {2}# (.*)$/gm)) out[m[1]] = m[2];
  return out;
}

describe('monctl daemon --config', () => {
  it('takes each value from the flag, else the env var, else the file, else the default', async () => {
    const file = configFile(
      ['listen: 127.0.0.1:7001', 'edgeListen: 127.0.0.1:7002', 'probeConcurrency: 11', 'httpTimeout: 3s', ''].join('\n'),
    );
    const run = await printConfig(['--config', file, '--listen', '127.0.0.1:7201'], {
      MONCTL_LISTEN: '127.0.0.1:7101',
      MONCTL_EDGE_LISTEN: '127.0.0.1:7102',
      MONCTL_HTTP_TIMEOUT_MS: '2500',
    });
    expect(run.code, run.stderr).toBe(0);
    const config = parse(run.stdout);
    expect(config).toMatchObject({
      listen: '127.0.0.1:7201', // flag over env and file
      edgeListen: '127.0.0.1:7102', // env over file
      httpTimeout: '2500ms', // env (its old name, plain milliseconds) over file
      probeConcurrency: 11, // file over default
      probePerHost: 32, // default
      scheduler: 'on',
    });
    expect(sourcesOf(run.stdout)).toMatchObject({
      listen: 'flag --listen',
      edgeListen: 'env MONCTL_EDGE_LISTEN',
      httpTimeout: 'env MONCTL_HTTP_TIMEOUT_MS',
      probeConcurrency: `file ${file}`,
      probePerHost: 'default',
    });
  });

  it('MONCTL_HTTP_TIMEOUT takes a duration; MONCTL_HTTP_TIMEOUT_MS, its older name, still works with a notice (issue 25)', async () => {
    const renamed = await printConfig([], { MONCTL_HTTP_TIMEOUT: '7s' });
    expect(renamed.code, renamed.stderr).toBe(0);
    expect(parse(renamed.stdout)).toMatchObject({ httpTimeout: '7s' });
    expect(sourcesOf(renamed.stdout).httpTimeout).toBe('env MONCTL_HTTP_TIMEOUT');
    expect(renamed.stderr).toBe('');
    const old = await printConfig([], { MONCTL_HTTP_TIMEOUT_MS: '7s' });
    expect(parse(old.stdout)).toMatchObject({ httpTimeout: '7s' });
    expect(old.stderr).toBe('monctl daemon: MONCTL_HTTP_TIMEOUT_MS is deprecated: use MONCTL_HTTP_TIMEOUT (the same values)\n');
    const both = await printConfig([], { MONCTL_HTTP_TIMEOUT: '4s', MONCTL_HTTP_TIMEOUT_MS: '9s' });
    expect(parse(both.stdout)).toMatchObject({ httpTimeout: '4s' });
    expect((await runMonctl(['daemon', '--help'])).stdout.replace(/\s+/g, ' ')).toMatch(
      /deprecated: MONCTL_HTTP_TIMEOUT_MS\) \(default: "15s", env: MONCTL_HTTP_TIMEOUT\)/,
    );
  });

  it('reads the public edge settings of issue 17 from the file', async () => {
    const file = configFile(
      [
        'edgeTlsListen: 0.0.0.0:8443',
        'trustedProxies: [10.0.0.0/8, "::1"]',
        'acmeDirectory: https://acme.example.test/dir',
        'acmeEmail: ops@example.test',
        'acmeChallenges: [tls-alpn-01, http-01]',
        'acmeRenewAt: 0.5',
        '',
      ].join('\n'),
    );
    const run = await printConfig(['--config', file]);
    expect(run.code, run.stderr).toBe(0);
    expect(parse(run.stdout)).toMatchObject({
      edgeTlsListen: '0.0.0.0:8443',
      acmeDirectory: 'https://acme.example.test/dir',
      acmeEmail: 'ops@example.test',
      acmeRenewAt: 0.5,
    });
    const sources = sourcesOf(run.stdout);
    for (const key of ['edgeTlsListen', 'trustedProxies', 'acmeDirectory', 'acmeEmail', 'acmeChallenges', 'acmeRenewAt'])
      expect(sources[key], key).toBe(`file ${file}`);
  });

  it('reads the file named by MONCTL_CONFIG, and its output is a config file that reads back the same', async () => {
    const file = configFile('sseHeartbeat: 1500ms\nscheduler: off\ndataDir: ./state\nhistoryRetentionDays: 7\n');
    const first = await printConfig([], { MONCTL_CONFIG: file });
    expect(first.code, first.stderr).toBe(0);
    expect(parse(first.stdout)).toMatchObject({ sseHeartbeat: '1500ms', scheduler: 'off', historyRetentionDays: 7 });
    // A relative path in the file is relative to the file's folder.
    expect(parse(first.stdout).dataDir).toBe(join(file, '..', 'state'));
    const again = await printConfig(['--config', configFile(first.stdout)]);
    expect(again.code, again.stderr).toBe(0);
    expect(parse(again.stdout)).toEqual(parse(first.stdout));
  });

  it('masks secrets: the admin password never appears, wherever it comes from', async () => {
    const secret = 'file-secret-password-42';
    const fromFile = await printConfig(['--config', configFile(`adminPassword: ${secret}\n`)]);
    expect(fromFile.code, fromFile.stderr).toBe(0);
    expect(fromFile.stdout).not.toContain(secret);
    expect(fromFile.stdout).toMatch(/^# adminPassword: "\*{8}" {2}# file .*monctl\.yaml \(secret, masked\)$/m);
    const envSecret = 'env-secret-password-42';
    const fromEnv = await printConfig([], { MONCTL_ADMIN_PASSWORD: envSecret });
    expect(fromEnv.stdout).not.toContain(envSecret);
    expect(fromEnv.stdout).toMatch(/^# adminPassword: "\*{8}" {2}# env MONCTL_ADMIN_PASSWORD/m);
    // Unset, it says so instead of printing anything.
    expect((await printConfig([])).stdout).toMatch(/^# adminPassword: {2}# not set: a random one/m);
    // The mask fed back as a value is refused rather than becoming the password.
    const masked = await printConfig(['--config', configFile('adminPassword: "********"\n')]);
    expect(masked.code).toBe(2);
    expect(masked.stderr).toContain('adminPassword: is the mask');
  });

  it('masks every credential of a database URL: the userinfo password, ?password= and ?sslpassword=', async () => {
    const url = 'postgres://monctl:user-pw-1@db.example.test:5432/monctl?sslmode=verify-full&password=query-pw-2&sslpassword=key-pw-3';
    const run = await printConfig([], { MONCTL_DATABASE_URL: url });
    expect(run.code, run.stderr).toBe(0);
    for (const secret of ['user-pw-1', 'query-pw-2', 'key-pw-3']) expect(run.stdout + run.stderr).not.toContain(secret);
    // What was set stays readable: the user, the host, the other parameters, and which credentials there are.
    expect(run.stdout).toContain(
      '# database: postgres://monctl:********@db.example.test:5432/monctl?sslmode=verify-full&password=********&sslpassword=********',
    );
    // The masked form fed back is refused rather than becoming the password.
    const masked = await printConfig([], { MONCTL_DATABASE_URL: 'postgres://db.example.test/monctl?sslpassword=********' });
    expect(masked.code).toBe(2);
    expect(masked.stderr).toContain('holds the mask --print-config prints as its sslpassword');
  });

  it('refuses a --public-url or --acme-directory with credentials without echoing them', async () => {
    const cases: Array<[string[], Record<string, string>, string]> = [
      [['--public-url', 'https://ops:public-pw-1@status.example.test/'], {}, '--public-url'],
      [[], { MONCTL_ACME_DIRECTORY: 'https://acme.example.test/dir?token=acme-token-2' }, 'MONCTL_ACME_DIRECTORY'],
    ];
    for (const [args, env, name] of cases) {
      const run = await printConfig(args, env);
      expect(run.code, name).toBe(2);
      expect(run.stderr, name).toContain(`${name}: must be a URL without credentials, query or fragment, got "https://`);
      expect(run.stderr, name).not.toMatch(/public-pw-1|acme-token-2/);
    }
    const fromFile = await printConfig(['--config', configFile('acmeDirectory: "https://u:file-pw-3@acme.example.test/dir"\n')]);
    expect(fromFile.code).toBe(2);
    expect(fromFile.stderr).toContain(
      'acmeDirectory: must be a URL without credentials, query or fragment, got "https://u:********@acme.example.test/dir"',
    );
  });

  it('refuses an unknown key, a wrong type or a bad value, naming the file and the key, and starts nothing', async () => {
    const dataDir = join(home.dir, 'never');
    const cases: Array<[string, RegExp]> = [
      ['bogus: 1', /: bogus: unknown key/],
      ['edge-listen: 127.0.0.1:0', /: edge-listen: unknown key \(did you mean edgeListen\?\)/],
      ['listen: 8080', /: listen: must be HOST:PORT .*got number 8080/],
      ['probeConcurrency: "8"', /: probeConcurrency: must be an integer greater than 0, got "8"/],
      ['probePerHost: [1, 2]', /: probePerHost: must be an integer greater than 0, got a list/],
      ['httpTimeout: 10 minutes', /: httpTimeout: must be a duration such as 500ms, 15s, 5m or 1h/],
      ['logFormat: fancy', /: logFormat: must be one of json, pretty, got "fancy"/],
      ['scheduler: maybe', /: scheduler: must be on or off/],
      ['listen:', /: listen: must be HOST:PORT .*got no value/],
    ];
    for (const [line, message] of cases) {
      const file = configFile(`dataDir: ${dataDir}\n${line}\n`);
      // The file is checked whole even where a flag wins; were it accepted, the daemon would start on these ports.
      const run = await runMonctl(['daemon', '--config', file, '--listen', '127.0.0.1:0', '--edge-listen', '127.0.0.1:0']);
      expect(run.code, line).toBe(2);
      expect(run.stderr, line).toMatch(new RegExp(`^monctl daemon: ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}${message.source}`, 'm'));
    }
    expect(existsSync(dataDir)).toBe(false);
  });

  it('reports a YAML syntax error with its line and column, and a missing or unreadable file', async () => {
    const syntax = configFile('listen: 127.0.0.1:0\ndataDir: [unclosed\n');
    const bad = await runMonctl(['daemon', '--config', syntax]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(new RegExp(`^monctl daemon: ${syntax}: line 3, column 1: .*`, 'm'));
    const duplicate = configFile('listen: 127.0.0.1:0\nlisten: 127.0.0.1:1\n');
    expect((await runMonctl(['daemon', '--config', duplicate])).stderr).toContain(
      `${duplicate}: line 2, column 1: Map keys must be unique`,
    );
    const notAMapping = configFile('- listen\n');
    expect((await runMonctl(['daemon', '--config', notAMapping])).stderr).toContain(`${notAMapping}: must be a mapping of settings`);
    const missing = await runMonctl(['daemon', '--config', join(home.dir, 'absent.yaml')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/absent\.yaml: cannot read the config file: ENOENT/);
    const folder = await runMonctl(['daemon', '--config', home.dir]);
    expect(folder.code).toBe(2);
    expect(folder.stderr).toMatch(/cannot read the config file: EISDIR/);
  });

  it('refuses bad values from flags and env vars with the same parsers', async () => {
    const env = await printConfig([], { MONCTL_PROBE_CONCURRENCY: 'lots' });
    expect(env.code).toBe(2);
    expect(env.stderr).toContain('monctl daemon: MONCTL_PROBE_CONCURRENCY: must be an integer greater than 0, got "lots"');
    const flag = await printConfig(['--sse-heartbeat', '0s']);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain('monctl daemon: --sse-heartbeat: must be a duration');
    // An empty env var counts as unset (systemd's Environment=NAME=).
    const empty = await printConfig([], { MONCTL_LOG_LEVEL: '' });
    expect(empty.code, empty.stderr).toBe(0);
    expect(sourcesOf(empty.stdout).logLevel).toBe('default');
  });

  it('reads durations the same way from flag, env and file', async () => {
    const forms: Array<[string, string]> = [
      ['500ms', '500ms'],
      ['1.5s', '1500ms'],
      ['15s', '15s'],
      ['5m', '5m'],
      ['1h', '1h'],
      ['2000', '2s'],
      ['90s', '90s'],
    ];
    for (const [given, shown] of forms) {
      // The headers timeout at the shortest form given: a request timeout may not be shorter (node refuses it).
      for (const run of [
        await printConfig(['--request-timeout', given, '--headers-timeout', '500ms']),
        await printConfig([], { MONCTL_REQUEST_TIMEOUT: given, MONCTL_HEADERS_TIMEOUT: '500ms' }),
        await printConfig(['--config', configFile(`requestTimeout: ${given}\nheadersTimeout: 500ms\n`)]),
      ]) {
        expect(run.code, `${given}: ${run.stderr}`).toBe(0);
        expect(parse(run.stdout).requestTimeout, given).toBe(shown);
      }
    }
  });

  it('needs both tlsCert and tlsKey, readable', async () => {
    const pem = configFile('not really a certificate');
    const half = await printConfig(['--config', configFile(`tlsCert: ${pem}\n`)]);
    expect(half.code).toBe(2);
    expect(half.stderr).toMatch(/monctl daemon: .*monctl\.yaml: tlsCert is set but tlsKey is not: HTTPS needs both/);
    const keyOnly = await printConfig([], { MONCTL_TLS_KEY: pem });
    expect(keyOnly.code).toBe(2);
    expect(keyOnly.stderr).toContain('MONCTL_TLS_KEY is set but tlsCert is not');
    const unreadable = await printConfig(['--tls-cert', pem, '--tls-key', join(home.dir, 'no-such.key')]);
    expect(unreadable.code).toBe(2);
    expect(unreadable.stderr).toMatch(/--tls-key: cannot read .*no-such\.key: ENOENT/);
    const both = await printConfig(['--tls-cert', pem], { MONCTL_TLS_KEY: pem });
    expect(both.code, both.stderr).toBe(0);
    expect(parse(both.stdout)).toMatchObject({ tlsCert: pem, tlsKey: pem });
  });

  it('refuses a request timeout shorter than the headers timeout, naming both sources', async () => {
    const short = await printConfig(['--request-timeout', '5s'], { MONCTL_HEADERS_TIMEOUT: '10s' });
    expect(short.code).toBe(2);
    expect(short.stderr).toBe(
      'monctl daemon: --request-timeout (5000 ms) is shorter than MONCTL_HEADERS_TIMEOUT (10000 ms): a client has the request timeout to send the whole request, headers included; raise it or lower the headers timeout\n',
    );
    const byDefault = await printConfig(['--request-timeout', '5s']);
    expect(byDefault.stderr).toContain('shorter than headersTimeout (default) (10000 ms)');
    expect((await printConfig(['--request-timeout', '10s'])).code).toBe(0);
  });

  it('starts a daemon from the file: the admin password and the pod name come from it', { timeout: 60_000 }, async () => {
    const password = 'password-from-the-file';
    const file = configFile(`adminPassword: ${password}\npodName: pod-from-file\nedgeTlsListen: 127.0.0.1:0\n`);
    // The helper's flags (--listen, --edge-listen, --data-dir) come on top; its MONCTL_ADMIN_PASSWORD is emptied (= unset).
    const d = await startDaemon({ env: { MONCTL_ADMIN_PASSWORD: '' }, args: ['--config', file] });
    try {
      const { res } = await login(d.url, 'admin', password);
      expect(res.status, res.text).toBe(302);
      expect(res.headers.location).toBe('/api');
      const topology = await send(d.url, 'GET', '/admin/api/topology', { headers: bearer(d.adminKey) });
      expect(topology.json().pods.map((p: { name: string }) => p.name)).toEqual(['pod-from-file']);
      // The HTTPS edge from the file too (issue 17).
      expect(d.edgeTlsUrl).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    } finally {
      await d.stop();
    }
  });
});

describe('README', () => {
  it('lists every setting with its flag and env var (the settings table is the source)', async () => {
    const { SETTINGS } = await import('../../daemon/config/settings.ts');
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    for (const s of SETTINGS) {
      const flag = s.flag ? `\`${s.flag.split(' ')[0]}\`` : '—';
      expect(readme, s.key).toContain(`| \`${s.key}\` | ${flag} | \`${s.env}\` |`);
    }
  });
});
