import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { ApiClient } from '../../src/client/api-client.ts';
import { VERSION } from '../../src/version.ts';
import { ROOT } from '../helpers/daemon.ts';
import { until } from '../tunnel/helpers.ts';
import { type Container, chrootRunner, crunRunner, type Runner, unpack, volumeFor } from './oci-run.ts';

/**
 * `npm run build:image` and `build:agent-image` as a user runs them, then the
 * image run by crun from its umoci-unpacked bundle (or, where this machine
 * cannot run containers, its rootfs under chroot as the image's user).
 */
let dir: string;
let runner: Runner;
let spec: ReturnType<typeof unpack>;
const layout = (name: string) => join(dir, name);

function build(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [join(ROOT, 'scripts/build-image.ts'), ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    proc.stdout.on('data', (c) => (out += c));
    proc.stderr.on('data', (c) => (out += c));
    proc.once('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`build-image ${args.join(' ')}: exit ${code}\n${out}`))));
  });
}

/** The image's config, read the way a registry client does: index.json, then the manifest, then the config blob. */
function imageConfig(name: string) {
  const blob = (digest: string) => JSON.parse(readFileSync(join(layout(name), 'blobs/sha256', digest.slice(7)), 'utf8'));
  const manifest = blob(JSON.parse(readFileSync(join(layout(name), 'index.json'), 'utf8')).manifests[0].digest);
  return { manifest, config: blob(manifest.config.digest) };
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

beforeAll(async () => {
  if (process.getuid?.() !== 0) throw new Error('the image test runs containers: run it as root');
  dir = mkdtempSync(join(tmpdir(), 'monctl-image-test-'));
  const logs = await Promise.all([build(['--out', layout('image')]), build(['--agent', '--out', layout('agent-image')])]);
  process.stdout.write(
    logs
      .map((l) =>
        l
          .split('\n')
          .filter((x) => x.startsWith('built '))
          .join('\n'),
      )
      .join('\n'),
  );
  spec = unpack(layout('image'), join(dir, 'bundle'));
  runner = crunRunner(join(dir, 'bundle'), spec, join(dir, 'crun-state'));
  // One run of `--version`: can this machine run containers at all?
  const probe = runner.start({
    name: `monctl-probe-${process.pid}`,
    volume: volumeFor(join(dir, 'probe'), spec),
    args: ['--version'],
    env: {},
  });
  let out = '';
  probe.proc.stdout?.on('data', (c) => (out += c));
  probe.proc.stderr?.on('data', (c) => (out += c));
  await new Promise((resolve) => probe.proc.once('exit', resolve));
  await probe.stop();
  // MONCTL_IMAGE_RUNTIME=chroot takes the fallback on purpose (to try it where crun works).
  const forced = process.env.MONCTL_IMAGE_RUNTIME === 'chroot';
  if (out.trim() !== VERSION || forced) {
    const why = forced ? 'MONCTL_IMAGE_RUNTIME=chroot' : out.trim().split('\n').pop();
    console.warn(`crun cannot run containers here (${why}): running the image's rootfs with unshare + chroot instead`);
    runner = chrootRunner(join(dir, 'bundle/rootfs'), spec);
  }
}, 240_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the daemon image', () => {
  it('is an OCI image whose config runs `monctl daemon` as a non-root user, with the data dir volume, ports, a health check and OCI labels', () => {
    const { manifest, config } = imageConfig('image');
    expect(manifest.mediaType).toBe('application/vnd.oci.image.manifest.v1+json');
    expect(config.os).toBe('linux');
    const c = config.config;
    expect(c.User).toBe('10001:10001');
    expect(c.Entrypoint).toEqual(['/usr/local/bin/node', '--max-semi-space-size=16', '/opt/monctl/dist/monctl.js', 'daemon']);
    expect(c.Env).toContain('MONCTL_DATA_DIR=/var/lib/monctl');
    expect(c.Volumes).toEqual({ '/var/lib/monctl': {} });
    expect(Object.keys(c.ExposedPorts).sort()).toEqual(['8080/tcp', '8081/tcp']);
    expect(c.Healthcheck.Test).toEqual(['CMD', '/usr/local/bin/node', '/opt/monctl/healthcheck.mjs']);
    const labels = c.Labels;
    expect(labels['org.opencontainers.image.title']).toBe('monctl');
    expect(labels['org.opencontainers.image.version']).toBe(VERSION);
    expect(labels['org.opencontainers.image.licenses']).toBe('MIT');
    expect(labels['org.opencontainers.image.source']).toMatch(/^https:\/\//);
    expect(labels['org.opencontainers.image.revision']).toMatch(/^[0-9a-f]{40}$/);
    expect(Number.isNaN(Date.parse(labels['org.opencontainers.image.created']))).toBe(false);
    // umoci read it as the runtime spec an engine would make: that user, that entrypoint.
    expect(spec.process.user).toMatchObject({ uid: 10001, gid: 10001 });
    expect(spec.process.args.slice(-1)).toEqual(['daemon']);
  });

  it('is small: Node, the bundle, the two native modules for linux-x64 and the libraries they link, nothing else', () => {
    const { manifest } = imageConfig('image');
    const layer = join(layout('image'), 'blobs/sha256', manifest.layers[0].digest.slice(7));
    const files = execFileSync('tar', ['tzf', layer], { encoding: 'utf8', maxBuffer: 64e6 }).trim().split('\n');
    expect(manifest.layers[0].size).toBeLessThan(60e6);
    expect(files.filter((f) => /\.ts$|\/src\/.*\.(cc|h)$|\/deps\//.test(f))).toEqual([]);
    expect(files.filter((f) => f.endsWith('.node')).sort()).toEqual([
      'opt/monctl/node_modules/@koromix/koffi-linux-x64/linux_x64/koffi.node',
      'opt/monctl/node_modules/better-sqlite3/prebuilds/linux-x64.node',
    ]);
    expect(files.filter((f) => f.startsWith('bin/') || /\/(sh|bash|busybox)$/.test(f))).toEqual([]);
    expect(files).toContain('etc/ssl/certs/ca-certificates.crt');
  });

  describe('running', () => {
    let volume: string;
    let port: number;
    let container: Container | undefined;
    let api: string;

    async function start(name: string): Promise<void> {
      port = await freePort();
      // The listen address through the env, the rest as flags after the entrypoint.
      const c = runner.start({
        name: `${name}-${process.pid}`,
        volume,
        env: { MONCTL_LISTEN: `127.0.0.1:${port}`, MONCTL_ADMIN_PASSWORD: 'image-test-password-1' },
        args: ['--edge-listen', '127.0.0.1:0', '--scheduler', 'off'],
      });
      container = c;
      let buffer = '';
      let stderr = '';
      c.proc.stderr?.on('data', (chunk) => (stderr += chunk));
      api = await new Promise<string>((resolve, reject) => {
        c.proc.stdout?.on('data', (chunk) => {
          buffer += chunk;
          const line = buffer.split('\n').find((l) => l.includes('"msg":"listening"'));
          if (line) resolve(JSON.parse(line).api);
        });
        c.proc.once('exit', (code) => reject(new Error(`the container exited (${code}) before listening\n${buffer}${stderr}`)));
      });
    }

    beforeAll(async () => {
      volume = volumeFor(join(dir, 'volume'), spec);
      await start('monctl-a');
    }, 60_000);
    afterAll(async () => {
      await container?.stop();
    });

    it('answers its health check: the image command inside, and GET /actuator/health from the host', async () => {
      const health = container!.exec(['/usr/local/bin/node', '/opt/monctl/healthcheck.mjs']);
      expect(health.output).toContain('"status":"UP"');
      expect(health.status).toBe(0);
      expect(api).toBe(`http://127.0.0.1:${port}`);
      expect(await (await fetch(`${api}/actuator/health`)).json()).toEqual({ status: 'UP' });
    });

    it('fails its health check where no daemon answers (so the check is not vacuous)', async () => {
      const elsewhere = await freePort();
      const health = container!.exec(['/usr/local/bin/node', '/opt/monctl/healthcheck.mjs'], { MONCTL_LISTEN: `127.0.0.1:${elsewhere}` });
      expect(health.output).toContain('unhealthy: connect ECONNREFUSED');
      expect(health.status).toBe(1);
    });

    it('runs on a read-only root: only the data dir and /tmp take writes (crun; the chroot fallback has no read-only root)', (ctx) => {
      if (runner.mode !== 'crun') ctx.skip();
      const write = (path: string) =>
        container!.exec(['/usr/local/bin/node', '-e', `require('node:fs').writeFileSync(${JSON.stringify(path)}, 'x')`]);
      expect(write('/opt/monctl/x').output).toContain('EROFS');
      expect(write('/tmp/x')).toEqual({ status: 0, output: '' });
      expect(write('/var/lib/monctl/x')).toEqual({ status: 0, output: '' });
    });

    it('runs as uid 10001, not root', () => {
      const status = readFileSync(`/proc/${container!.pid()}/status`, 'utf8');
      const uids = /^Uid:\s+(.*)$/m.exec(status)![1].split(/\s+/);
      expect(uids).toEqual(['10001', '10001', '10001', '10001']);
      // That pid is the daemon itself, not a wrapper.
      expect(readFileSync(`/proc/${container!.pid()}/cmdline`, 'utf8').split('\0')).toContain('/opt/monctl/dist/monctl.js');
    });

    it('keeps its data in the volume: a resource created before a restart is there after it', async () => {
      const key = readFileSync(join(volume, 'admin-api-key'), 'utf8').trim();
      const admin = () => new ApiClient({ server: api, credential: { kind: 'api-key', token: key } });
      const created = await admin().call(operations.createResource, {
        body: { name: 'kept-in-volume', resourceType: 'TCP', target: '127.0.0.1:9', active: false },
      });
      await container!.stop();
      container = undefined;
      await start('monctl-b');
      await until(async () => (await fetch(`${api}/actuator/health`)).ok);
      const after = await admin().call(operations.getResource, { params: { id: created.id } });
      expect(after.name).toBe('kept-in-volume');
    }, 60_000);
  });
});

describe('the agent image', () => {
  it('holds Node, the agent bundle and koffi only, runs as 10001, and its entrypoint is the agent', async () => {
    const { manifest, config } = imageConfig('agent-image');
    const c = config.config;
    expect(c.User).toBe('10001:10001');
    expect(c.Entrypoint).toEqual(['/usr/local/bin/node', '--max-semi-space-size=1', '/opt/monctl/agent.mjs']);
    expect(c.Labels['org.opencontainers.image.title']).toBe('monctl-agent');
    const layer = join(layout('agent-image'), 'blobs/sha256', manifest.layers[0].digest.slice(7));
    const files = execFileSync('tar', ['tzf', layer], { encoding: 'utf8', maxBuffer: 64e6 }).trim().split('\n');
    // The bundle, and koffi for its PING checks: no dist/, no SQLite.
    const app = files.filter((f) => f.startsWith('opt/monctl/') && !f.endsWith('/'));
    expect(
      app.filter((f) => !f.startsWith('opt/monctl/node_modules/koffi/') && !f.startsWith('opt/monctl/node_modules/@koromix/')),
    ).toEqual(['opt/monctl/agent.mjs']);
    expect(app).toContain('opt/monctl/node_modules/@koromix/koffi-linux-x64/linux_x64/koffi.node');
    const agentSpec = unpack(layout('agent-image'), join(dir, 'agent-bundle'));
    const version = execFileSync(
      'chroot',
      ['--userspec=10001:10001', join(dir, 'agent-bundle/rootfs'), ...agentSpec.process.args, '--version'],
      {
        encoding: 'utf8',
      },
    );
    expect(version.trim()).toBe(VERSION);
    // PING checks load koffi from beside the entry script: it resolves there, and binds libc.
    const rootfs = join(dir, 'agent-bundle/rootfs');
    const script =
      "const k = require('node:module').createRequire('/opt/monctl/agent.mjs')('koffi'); k.load('libc.so.6').func('int getpid()'); console.log('bound')";
    expect(
      execFileSync('chroot', ['--userspec=10001:10001', rootfs, '/usr/local/bin/node', '-e', script], { encoding: 'utf8' }).trim(),
    ).toBe('bound');
  });
});
