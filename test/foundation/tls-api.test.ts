import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { runMonctl, tempHome } from '../cli/run.ts';
import { Agent, fetch, type Response } from 'undici';
import { ADMIN_PASSWORD, ROOT, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { agentSlot, makePki, type TestPki } from '../helpers/tls.ts';
import { edge, startAgent, startTarget, until } from '../tunnel/helpers.ts';

/**
 * HTTPS on the API listener (--tls-cert/--tls-key), seen from every client:
 * the CLI (its own transport and its SSE streams), and the agent's tunnel.
 * Each trusts the test CA through --ca-file, MONCTL_CA_FILE,
 * NODE_EXTRA_CA_CERTS or a saved context, and fails clearly without it.
 */
let pki: TestPki;
let d: TestDaemon;
let home: ReturnType<typeof tempHome>;

beforeAll(async () => {
  pki = makePki();
  const pair = pki.issue('server', 0x1001);
  d = await startDaemon({ args: ['--tls-cert', pair.certFile, '--tls-key', pair.keyFile], ca: pki.ca });
  home = tempHome();
});
afterAll(async () => {
  await d?.stop();
  home?.cleanup();
  pki?.cleanup();
});

/** `monctl` as ADMIN against the https daemon; the CA comes from `env` or `args`. */
const monctl = (args: string[], env: Record<string, string> = {}) =>
  runMonctl(args, {
    env: { MONCTL_SERVER: d.url, MONCTL_API_KEY: d.adminKey, MONCTL_CONFIG_DIR: home.dir, XDG_DATA_HOME: join(home.dir, 'nodata'), ...env },
  });

/** A long-running `monctl … --watch`, piped: NDJSON lines until it is stopped. */
function watch(args: string[], env: Record<string, string>) {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(MONCTL_|XDG_)/.test(k))) as Record<string, string>;
  const proc = spawn(join(ROOT, 'bin/monctl'), args, {
    env: { ...base, MONCTL_SERVER: d.url, MONCTL_API_KEY: d.adminKey, MONCTL_CONFIG_DIR: home.dir, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (c) => (stdout += c));
  proc.stderr.on('data', (c) => (stderr += c));
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  return {
    events: () =>
      stdout
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as { event: string; data: any }),
    stderr: () => stderr,
    exited,
    stop: () => {
      proc.kill('SIGTERM');
      return exited;
    },
  };
}

const VERIFY_HINT =
  /cannot verify the TLS certificate of https:\/\/127\.0\.0\.1:\d+: .*; if a private CA issued it, pass --ca-file .*NODE_EXTRA_CA_CERTS/;

describe('the API over https', () => {
  it('logs an https:// api URL and keeps the edge on http', () => {
    expect(d.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(d.edgeUrl).toMatch(/^http:\/\//);
  });

  it('the CLI verifies: --ca-file, MONCTL_CA_FILE and NODE_EXTRA_CA_CERTS work, no CA fails clearly', async () => {
    // Both CLI paths: the quick `-o json` read, and commander with the typed client.
    for (const read of [
      ['resources', 'list', '-o', 'json'],
      ['resources', 'list', '--output=json'],
      ['info', '-o', 'json'],
    ]) {
      const flag = await monctl(['--ca-file', pki.caFile, ...read]);
      expect(flag.code, flag.stderr).toBe(0);
      expect(flag.stderr).toBe(''); // no warning either (an IP address as TLS server name is one)
      expect((await monctl(read, { MONCTL_CA_FILE: pki.caFile })).code).toBe(0);
      const extra = await monctl(read, { NODE_EXTRA_CA_CERTS: pki.caFile });
      expect(extra.code, extra.stderr).toBe(0);
    }
    expect((await monctl(['info', '-o', 'json'], { MONCTL_CA_FILE: pki.caFile })).json()).toMatchObject({
      user: 'admin',
      caFile: pki.caFile,
    });

    for (const read of [
      ['resources', 'list', '-o', 'json'],
      ['resources', 'list', '--output=json'],
    ]) {
      const untrusted = await monctl(read);
      expect(untrusted.code).toBe(1);
      expect(untrusted.stderr).toMatch(VERIFY_HINT);
      expect(untrusted.stderr).not.toMatch(/\n\s+at /); // no stack trace
    }
    // The wrong scheme for a listener says which one to use.
    const asHttp = await monctl(['resources', 'list', '-o', 'json', '--server', d.url.replace('https:', 'http:')]);
    expect(asHttp.code).toBe(1);
    expect(asHttp.stderr).toMatch(/closed the connection without answering; if it serves HTTPS, use https:\/\//);
    const asHttps = await monctl([
      'resources',
      'list',
      '-o',
      'json',
      '--server',
      d.edgeUrl.replace('http:', 'https:'),
      '--ca-file',
      pki.caFile,
    ]);
    expect(asHttps.code).toBe(1);
    expect(asHttps.stderr).toMatch(/does not speak TLS there \(EPROTO\); for a plain-HTTP daemon use http:\/\//);
    const missing = await monctl(['resources', 'list', '-o', 'json', '--ca-file', join(pki.dir, 'nope.pem')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/--ca-file .*nope\.pem: cannot read it \(ENOENT\)/);
  });

  it('session cookies are Secure over https: the login page, the login and the logout', async () => {
    const dispatcher = new Agent({ connect: { ca: pki.ca } });
    const jsession = (res: Response) => res.headers.getSetCookie().find((c) => c.startsWith('JSESSIONID='));
    try {
      const page = await fetch(`${d.url}/login`, { dispatcher });
      const pre = jsession(page);
      expect(pre).toMatch(/;\s*Secure/);
      const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.text())?.[1] ?? '';
      const form = new URLSearchParams({ username: 'admin', password: ADMIN_PASSWORD, _csrf: csrf }).toString();
      const headers = { cookie: pre!.split(';')[0]!, 'content-type': 'application/x-www-form-urlencoded' };
      const login = await fetch(`${d.url}/login`, { method: 'POST', dispatcher, redirect: 'manual', headers, body: form });
      expect(login.headers.get('location')).toBe('/api');
      const session = jsession(login);
      expect(session).toMatch(/;\s*Secure/);
      const logout = await fetch(`${d.url}/logout`, {
        method: 'POST',
        dispatcher,
        redirect: 'manual',
        headers: { cookie: session!.split(';')[0]!, 'x-csrf-token': csrf },
      });
      expect(logout.headers.get('location')).toBe('/login?logout');
      expect(jsession(logout)).toMatch(/;\s*Secure/);
    } finally {
      await dispatcher.close();
    }
  });

  it('login --ca-file remembers the CA in the context', async () => {
    const own = tempHome();
    try {
      const env = { MONCTL_CONFIG_DIR: own.dir, XDG_DATA_HOME: join(own.dir, 'nodata') };
      const login = await runMonctl(['login', '--server', d.url, '--ca-file', pki.caFile, '--name', 'secure'], {
        input: `${d.adminKey}\n`,
        env,
      });
      expect(login.code, login.stderr).toBe(0);
      expect(JSON.parse(readFileSync(join(own.dir, 'config.json'), 'utf8')).contexts.secure.caFile).toBe(pki.caFile);
      const later = await runMonctl(['resources', 'list', '-o', 'json'], { env });
      expect(later.code, later.stderr).toBe(0);
      const viaCommander = await runMonctl(['info', '-o', 'json'], { env });
      expect(viaCommander.json()).toMatchObject({ serverSource: 'context secure', user: 'admin', caFile: pki.caFile });
    } finally {
      own.cleanup();
    }
  });

  it('CLI SSE streams over https (eventsource on fetch) with --ca-file and NODE_EXTRA_CA_CERTS; none without the CA', async () => {
    const streams = [
      watch(['topology', '--watch', '--ca-file', pki.caFile], {}),
      watch(['topology', '--watch'], { NODE_EXTRA_CA_CERTS: pki.caFile }),
    ];
    try {
      for (const s of streams) await until(() => s.events().some((e) => e.event === 'SNAPSHOT'));
      await d.admin.call(operations.createAgent, { body: { name: 'sse-witness' } });
      for (const s of streams)
        await until(() => s.events().some((e) => e.event === 'AGENT_CREATED' && e.data?.agent?.name === 'sse-witness'));
    } finally {
      for (const s of streams) await s.stop();
    }
    // A certificate that does not verify is fatal for a stream, not an endless reconnect.
    const untrusted = watch(['topology', '--watch'], {});
    expect(await untrusted.exited).toBe(1);
    expect(untrusted.stderr()).toMatch(VERIFY_HINT);
  });

  it('the agent dials over https with --ca-file (or NODE_EXTRA_CA_CERTS) and serves a route; without the CA it logs why and retries', async () => {
    const target = await startTarget((req, res) => res.end(`target saw ${req.url}`));
    const agents: Array<ReturnType<typeof startAgent>> = [];
    try {
      for (const [name, args, env] of [
        ['tls-flag', ['--ca-file', pki.caFile], {}],
        ['tls-extra', [], { NODE_EXTRA_CA_CERTS: pki.caFile }],
      ] as const) {
        const agent = await agentSlot(d, name, home.dir);
        agents.push(startAgent(d.url, agent.tokenFile, [...args], env));
        await until(async () => (await d.admin.call(operations.getAgent, { params: { id: agent.id } })).status === 'CONNECTED');
        await d.admin.call(operations.createRoute, {
          body: { name, type: 'HTTP', agentId: agent.id, target: target.url, hostname: `${name}.test` },
        });
        const res = await edge(d.edgeUrl, `${name}.test`, 'GET', '/through/tls');
        expect(res.status, res.text).toBe(200);
        expect(res.text).toBe('target saw /through/tls');
      }

      const agent = await agentSlot(d, 'tls-untrusted', home.dir);
      const untrusted = startAgent(d.url, agent.tokenFile);
      agents.push(untrusted);
      const failures = () => untrusted.logs.filter((l) => l.msg === 'tunnel: dial failed');
      await until(() => failures().length >= 2); // logged, then retried
      expect(String(failures()[0].error)).toMatch(VERIFY_HINT);
      expect(untrusted.proc.exitCode).toBeNull();
      expect((await d.admin.call(operations.getAgent, { params: { id: agent.id } })).status).toBe('PENDING');
    } finally {
      await Promise.all(agents.map((a) => a.stop('SIGKILL')));
      await target.close();
    }
  });
});

describe('daemon start with --tls-cert/--tls-key', () => {
  const daemon = (args: string[]) =>
    runMonctl(['daemon', '--listen', '127.0.0.1:0', '--edge-listen', '127.0.0.1:0', '--data-dir', join(home.dir, 'never'), ...args]);

  it('needs both files (exit 2) and a key that matches the certificate (exit 1, naming the file)', async () => {
    const other = pki.issue('other', 0x2002);
    const own = pki.issue('own', 0x2003);
    const alone = await daemon(['--tls-cert', own.certFile]);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toMatch(/HTTPS needs both tlsCert and tlsKey/);
    const mismatch = await daemon(['--tls-cert', own.certFile, '--tls-key', other.keyFile]);
    expect(mismatch.code).toBe(1);
    expect(mismatch.stderr).toContain(`--tls-key ${other.keyFile} does not match the certificate in --tls-cert ${own.certFile}`);
    const unreadable = await daemon(['--tls-cert', join(pki.dir, 'gone.pem'), '--tls-key', own.keyFile]);
    // A configuration error, found before anything starts (daemon/config/daemon-config.ts).
    expect(unreadable.code).toBe(2);
    expect(unreadable.stderr).toContain(`--tls-cert: cannot read ${join(pki.dir, 'gone.pem')}: ENOENT`);
    const notPem = await daemon(['--tls-cert', pki.caFile.replace('ca.pem', 'server.ext'), '--tls-key', own.keyFile]);
    expect(notPem.code).toBe(1);
    expect(notPem.stderr).toMatch(/--tls-cert .*server\.ext: not a PEM certificate/);
  });

  it('SIGHUP does not stop a daemon without TLS', async () => {
    const plain = await startDaemon();
    try {
      plain.proc.kill('SIGHUP');
      await until(() => plain.logs.some((l) => l.msg === 'nothing to reload (the API listener has no --tls-cert)'));
      expect((await plain.admin.call(operations.me)).username).toBe('admin');
    } finally {
      expect(await plain.stop()).toBe(0);
    }
  });
});
