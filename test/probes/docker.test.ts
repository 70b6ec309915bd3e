import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDispatchers, type Dispatchers } from '../../src/probes/dispatchers.ts';
import { type DockerDeps, probeDocker } from '../../src/probes/docker/docker-probe.ts';
import { RegistryState } from '../../src/probes/docker/state.ts';
import { buildLayout, inspectRaw, type Layout, push } from './helpers/images.ts';
import { blobPath, type Registry, startRegistry } from './helpers/registry.ts';
import { startTokenServer, type TokenServer } from './helpers/token-server.ts';

// Real registries (Debian's docker-registry) with images built by umoci and pushed by skopeo.
let layout: Layout;
let dispatchers: Dispatchers;
let work: string;
const cleanups: Array<() => Promise<void> | void> = [];

function deps(credentials: Record<string, { username: string; password: string }> = {}): DockerDeps {
  return { dispatchers, state: new RegistryState(), timeoutMs: 5_000, credential: async (registry) => credentials[registry] };
}

beforeAll(() => {
  layout = buildLayout();
  dispatchers = createDispatchers(5_000);
  work = mkdtempSync(join(tmpdir(), 'monctl-docker-test-'));
  cleanups.push(
    () => layout.remove(),
    () => dispatchers.close(),
    () => rmSync(work, { recursive: true, force: true }),
  );
});

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

describe('an open registry', () => {
  let reg: Registry;
  beforeAll(async () => {
    reg = await startRegistry();
    cleanups.push(() => reg.stop());
    await push(layout, 'app', `${reg.host}/team/app:1`);
    await push(layout, 'app', `${reg.host}/team/v2:1`, { format: 'v2s2' });
    await push(layout, 'multi', `${reg.host}/team/multi:1`, { all: true });
    await push(layout, 'broken', `${reg.host}/team/broken:1`);
    await push(layout, 'app', `${reg.host}/ns/a:1`);
    await push(layout, 'app', `${reg.host}/ns/a:2`);
    await push(layout, 'amd', `${reg.host}/ns/sub/b:1`);
    await push(layout, 'broken', `${reg.host}/ns/broken:1`);
    // Delete the broken image's only layer from storage: its manifest still resolves.
    const manifest = await inspectRaw(`${reg.host}/team/broken:1`);
    rmSync(blobPath(reg, manifest.layers[0].digest), { recursive: true });
  });

  it('an OCI image pulls', async () => {
    const r = await probeDocker(`${reg.host}/team/app:1`, false, false, deps());
    expect(r).toMatchObject({ status: 'AVAILABLE', errorCode: null });
    expect(r.message).toMatch(/^pullable: team\/app:1 \(sha256:/);
  });

  it('a Docker v2 image pulls', async () => {
    const raw = await inspectRaw(`${reg.host}/team/v2:1`);
    expect(raw.mediaType).toBe('application/vnd.docker.distribution.manifest.v2+json');
    expect(await probeDocker(`${reg.host}/team/v2:1`, false, false, deps())).toMatchObject({ status: 'AVAILABLE' });
  });

  it('a multi-platform index pulls for linux/amd64', async () => {
    const r = await probeDocker(`${reg.host}/team/multi:1`, false, false, deps());
    expect(r.status).toBe('AVAILABLE');
    expect(r.message).toContain('for linux/amd64');
  });

  it('a pinned digest pulls', async () => {
    const res = await fetch(`http://${reg.host}/v2/team/app/manifests/1`, {
      headers: { accept: 'application/vnd.oci.image.manifest.v1+json' },
    });
    const digest = res.headers.get('docker-content-digest');
    expect(digest).toMatch(/^sha256:/);
    const r = await probeDocker(`${reg.host}/team/app@${digest}`, false, false, deps());
    expect(r).toMatchObject({ status: 'AVAILABLE' });
    expect(r.message).toContain(`team/app:${digest}`);
  });

  it('a deleted blob fails at the blob step', async () => {
    const r = await probeDocker(`${reg.host}/team/broken:1`, false, false, deps());
    expect(r).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'DOCKER_ERROR' });
    expect(r.message).toMatch(/^blob: blob sha256:[0-9a-f]+… of team\/broken answered 404/);
  });

  it('a missing tag fails at the manifest step', async () => {
    const r = await probeDocker(`${reg.host}/team/app:nope`, false, false, deps());
    expect(r).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'DOCKER_ERROR' });
    expect(r.message).toBe('manifest: team/app:nope not found (404)');
  });

  it('a missing repository fails at the manifest step', async () => {
    const r = await probeDocker(`${reg.host}/team/none`, false, false, deps());
    expect(r.message).toMatch(/^manifest: team\/none:latest/);
  });

  it('a recursive namespace with one broken image is down and says which', async () => {
    const r = await probeDocker(`${reg.host}/ns`, false, true, deps());
    expect(r).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'DOCKER_ERROR' });
    expect(r.message).toMatch(/^3 of 4 images pull under 127\.0\.0\.1:\d+\/ns; failed: ns\/broken:1 \(blob: /);
  });

  it('a recursive namespace whose images all pull is available', async () => {
    const r = await probeDocker(`${reg.host}/ns/sub`, false, true, deps());
    expect(r).toMatchObject({ status: 'AVAILABLE', errorCode: null });
    expect(r.message).toMatch(/^1 of 1 images pull under/);
  });

  it('an empty namespace is a clear error', async () => {
    const r = await probeDocker(`${reg.host}/nothing`, false, true, deps());
    expect(r).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'DOCKER_ERROR' });
    expect(r.message).toMatch(/^catalog: no images found under/);
  });

  it('a refused port is a registry-step error', async () => {
    const r = await probeDocker('127.0.0.1:1/team/app:1', false, false, deps());
    expect(r).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'DOCKER_ERROR' });
    expect(r.message).toMatch(/^registry: cannot reach 127\.0\.0\.1:1: .*ECONNREFUSED/);
  });
});

describe('a registry over HTTPS with a self-signed certificate', () => {
  let reg: Registry;
  beforeAll(async () => {
    const cert = join(work, 'registry.crt');
    const key = join(work, 'registry.key');
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=registry.example'],
      { stdio: 'ignore' },
    );
    reg = await startRegistry({ kind: 'none' }, { cert, key });
    cleanups.push(() => reg.stop());
    await push(layout, 'app', `${reg.host}/secure/app:1`);
  });

  it('fails without skipTLS, naming the certificate problem', async () => {
    const r = await probeDocker(`${reg.host}/secure/app:1`, false, false, deps());
    expect(r).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'DOCKER_ERROR' });
    expect(r.message).toMatch(/^registry: cannot reach 127\.0\.0\.1:\d+: .*self-signed/i);
  });

  it('pulls with skipTLS', async () => {
    expect(await probeDocker(`${reg.host}/secure/app:1`, true, false, deps())).toMatchObject({ status: 'AVAILABLE' });
  });
});

describe('a registry with htpasswd basic auth', () => {
  let reg: Registry;
  const cred = { username: 'robot', password: 'robot-password-1' };
  beforeAll(async () => {
    reg = await startRegistry({ kind: 'htpasswd', ...cred });
    cleanups.push(() => reg.stop());
    await push(layout, 'app', `${reg.host}/private/app:1`, { creds: `${cred.username}:${cred.password}` });
  });

  it('pulls with stored credentials', async () => {
    const r = await probeDocker(`${reg.host}/private/app:1`, false, false, deps({ [reg.host]: cred }));
    expect(r).toMatchObject({ status: 'AVAILABLE' });
  });

  it('fails at the auth step without stored credentials', async () => {
    const r = await probeDocker(`${reg.host}/private/app:1`, false, false, deps());
    expect(r).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'DOCKER_ERROR' });
    expect(r.message).toBe(`auth: ${reg.host} requires a username and password; none stored`);
  });

  it('fails at the manifest step with a wrong password', async () => {
    const r = await probeDocker(`${reg.host}/private/app:1`, false, false, deps({ [reg.host]: { ...cred, password: 'wrong-password!' } }));
    expect(r.message).toMatch(/^manifest: 401 Unauthorized \(credentials rejected\)/);
  });
});

describe('a registry with token auth', () => {
  let reg: Registry;
  let tokens: TokenServer;
  const cred = { username: 'ci', password: 'ci-password-123' };
  beforeAll(async () => {
    tokens = await startTokenServer(work, cred.username, cred.password);
    cleanups.push(() => tokens.stop());
    reg = await startRegistry({
      kind: 'token',
      realm: tokens.realm,
      service: tokens.service,
      issuer: tokens.issuer,
      certFile: tokens.certFile,
    });
    cleanups.push(() => reg.stop());
    const creds = `${cred.username}:${cred.password}`;
    await push(layout, 'app', `${reg.host}/private/app:1`, { creds });
    await push(layout, 'multi', `${reg.host}/public/multi:1`, { creds, all: true });
    await push(layout, 'app', `${reg.host}/limited/app:1`, { creds });
  });

  it('pulls with stored credentials and caches the token per scope', async () => {
    const d = deps({ [reg.host]: cred });
    tokens.requests.length = 0;
    expect(await probeDocker(`${reg.host}/private/app:1`, false, false, d)).toMatchObject({ status: 'AVAILABLE' });
    expect(await probeDocker(`${reg.host}/private/app:1`, false, false, d)).toMatchObject({ status: 'AVAILABLE' });
    expect(tokens.requests).toEqual([{ scope: 'repository:private/app:pull', account: cred.username }]);
  });

  it('pulls a public image anonymously', async () => {
    const r = await probeDocker(`${reg.host}/public/multi:1`, false, false, deps());
    expect(r).toMatchObject({ status: 'AVAILABLE' });
  });

  it('a private image without credentials is refused at the manifest step', async () => {
    const r = await probeDocker(`${reg.host}/private/app:1`, false, false, deps());
    expect(r).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'DOCKER_ERROR' });
    expect(r.message).toMatch(/^manifest: 401 Unauthorized \(no credentials stored\)/);
  });

  it('wrong credentials fail at the token step', async () => {
    const r = await probeDocker(`${reg.host}/private/app:1`, false, false, deps({ [reg.host]: { ...cred, password: 'nope-nope-nope' } }));
    expect(r.message).toMatch(/^token: http:\/\/127\.0\.0\.1:\d+\/token answered 401/);
  });

  it('a rate-limited check is UNKNOWN, not down', async () => {
    const r = await probeDocker(`${reg.host}/limited/app:1`, false, false, deps({ [reg.host]: cred }));
    expect(r).toMatchObject({ status: 'UNKNOWN', errorCode: 'DOCKER_ERROR' });
    expect(r.message).toMatch(/^token: rate limited/);
  });

  it('the catalog of a token registry is listed with a catalog scope', async () => {
    const r = await probeDocker(`${reg.host}/public`, false, true, deps({ [reg.host]: cred }));
    expect(r).toMatchObject({ status: 'AVAILABLE' });
    expect(r.message).toMatch(/^1 of 1 images pull under/);
  });

  it('a catalog the registry refuses is a clear error', async () => {
    const r = await probeDocker(`${reg.host}/public`, false, true, deps());
    expect(r).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'DOCKER_ERROR' });
    expect(r.message).toMatch(/^catalog: 401 Unauthorized|^catalog: the registry refused the catalog/);
  });

  it('a token realm on another host over plain HTTP is refused', async () => {
    const other = await startRegistry({
      kind: 'token',
      realm: tokens.realm.replace('127.0.0.1', 'localhost'),
      service: tokens.service,
      issuer: tokens.issuer,
      certFile: tokens.certFile,
    });
    try {
      const r = await probeDocker(`${other.host}/private/app:1`, false, false, deps({ [other.host]: cred }));
      expect(r).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'DOCKER_ERROR' });
      expect(r.message).toMatch(/^token: token realm http:\/\/localhost:\d+ refused/);
    } finally {
      await other.stop();
    }
  });
});
