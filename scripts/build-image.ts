import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { bundleAgent, DIST } from './bundle.ts';
import { type ImageConfig, writeOciImage } from './image/oci.ts';
import { APP_DIR, DATA_DIR, NODE, stageAgent, stageDaemon, UID } from './image/rootfs.ts';

/**
 * `npm run build:image`: the daemon as an OCI image layout in dist/image
 * (`--agent`: the agent's, in dist/agent-image; `--out DIR` elsewhere), built
 * without a container engine: the tree is staged from this machine's files and
 * written as one layer by scripts/image/ (docs/DECISIONS.md, "Container images").
 * Load it with `skopeo copy oci:dist/image:latest containers-storage:monctl:latest`
 * or run it from the layout with `podman run oci:dist/image:latest`.
 */
const ROOT = resolve(import.meta.dirname, '..');
const arg = (name: string) => {
  const at = process.argv.indexOf(name);
  return at > 0 ? process.argv[at + 1] : undefined;
};
const agent = process.argv.includes('--agent');
const out = resolve(arg('--out') ?? join(DIST, agent ? 'agent-image' : 'image'));
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
const version: string = pkg.version;
const git = (...args: string[]) => spawnSync('git', args, { cwd: ROOT, encoding: 'utf8' }).stdout?.trim() || undefined;
// SOURCE_DATE_EPOCH (reproducible builds) fixes every time in the image; otherwise the last commit's.
const epoch = Number(process.env.SOURCE_DATE_EPOCH ?? git('log', '-1', '--format=%ct') ?? Date.now() / 1000);
const created = new Date(Math.floor(epoch) * 1000);

const stage = mkdtempSync(join(tmpdir(), 'monctl-image-'));
try {
  if (agent) {
    await bundleAgent('esm', join(stage, 'agent.mjs'));
    stageAgent(join(stage, 'rootfs'), join(stage, 'agent.mjs'));
  } else {
    // Its own build, not dist/: a concurrent `npm pack` (the package test) rebuilds dist/ meanwhile.
    execFileSync(process.execPath, [join(ROOT, 'scripts/build.ts'), '--outdir', join(stage, 'dist')], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    stageDaemon(join(stage, 'rootfs'), version, join(stage, 'dist'));
  }
  const title = agent ? 'monctl-agent' : 'monctl';
  const labels = {
    'org.opencontainers.image.title': title,
    'org.opencontainers.image.description': agent ? 'monctl tunnel agent' : pkg.description,
    'org.opencontainers.image.version': version,
    'org.opencontainers.image.source': process.env.MONCTL_IMAGE_SOURCE ?? pkg.repository?.url ?? 'https://github.com/monctl/monctl',
    'org.opencontainers.image.licenses': pkg.license,
    'org.opencontainers.image.created': created.toISOString(),
    'org.opencontainers.image.revision': git('rev-parse', 'HEAD') ?? 'unknown',
  };
  const common = {
    User: `${UID}:${UID}`,
    WorkingDir: agent ? '/tmp' : DATA_DIR,
    Labels: labels,
    StopSignal: 'SIGTERM',
    Cmd: [],
  };
  // The same young-generation caps as bin/monctl (no shell in the image to run it).
  const config: ImageConfig = agent
    ? {
        ...common,
        Env: ['HOME=/tmp', 'NODE_COMPILE_CACHE=/tmp/node-compile-cache'],
        Entrypoint: [NODE, '--max-semi-space-size=1', `${APP_DIR}/agent.mjs`],
        ExposedPorts: {},
        Volumes: {},
      }
    : {
        ...common,
        Env: [`MONCTL_DATA_DIR=${DATA_DIR}`, `HOME=${DATA_DIR}`, 'NODE_COMPILE_CACHE=/tmp/node-compile-cache', 'MONCTL_LOG_FORMAT=json'],
        Entrypoint: [NODE, '--max-semi-space-size=16', `${APP_DIR}/dist/monctl.js`, 'daemon'],
        ExposedPorts: { '8080/tcp': {}, '8081/tcp': {} },
        Volumes: { [DATA_DIR]: {} },
        Healthcheck: {
          Test: ['CMD', NODE, `${APP_DIR}/healthcheck.mjs`],
          Interval: 30e9,
          Timeout: 5e9,
          StartPeriod: 20e9,
          Retries: 3,
        },
      };
  const built = await writeOciImage({
    rootfs: join(stage, 'rootfs'),
    out,
    tag: 'latest',
    created,
    config,
    ownerOf: (path) =>
      path === DATA_DIR.slice(1) || path.startsWith(`${DATA_DIR.slice(1)}/`) ? { uid: UID, gid: UID } : { uid: 0, gid: 0 },
  });
  const mb = (n: number) => `${(n / 1e6).toFixed(1)} MB`;
  process.stdout.write(
    `built ${title} ${version} in ${out} (oci layout, tag latest, ${built.digest}): ${mb(built.compressedBytes)} compressed, ${mb(built.uncompressedBytes)} unpacked\n`,
  );
} finally {
  rmSync(stage, { recursive: true, force: true });
}
