import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Tags of the OCI layout built once per test file. */
export interface Layout {
  dir: string;
  remove(): void;
}

function run(cmd: string, args: string[]): string {
  return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** One single-layer image: a file whose content makes the layer (and its digest) unique. */
function image(layout: string, work: string, tag: string, arch: string, content: string): void {
  const bundle = join(work, `bundle-${tag}`);
  run('umoci', ['unpack', '--image', `${layout}:base`, bundle]);
  writeFileSync(join(bundle, 'rootfs', 'content.txt'), content);
  run('umoci', ['repack', '--image', `${layout}:${tag}`, bundle]);
  run('umoci', ['config', '--image', `${layout}:${tag}`, '--os', 'linux', '--architecture', arch, '--config.cmd', '/content.txt']);
  rmSync(bundle, { recursive: true, force: true });
}

function writeBlob(layout: string, data: string): { digest: string; size: number } {
  const hex = createHash('sha256').update(data).digest('hex');
  writeFileSync(join(layout, 'blobs', 'sha256', hex), data);
  return { digest: `sha256:${hex}`, size: Buffer.byteLength(data) };
}

/**
 * An OCI layout with tags `app` (linux/amd64), `broken` (its own layer, to be
 * deleted from the registry), `amd` and `arm`, and `multi`: an image index of
 * `amd` (linux/amd64) and `arm` (linux/arm64).
 */
export function buildLayout(): Layout {
  const work = mkdtempSync(join(tmpdir(), 'monctl-images-'));
  const layout = join(work, 'layout');
  run('umoci', ['init', '--layout', layout]);
  run('umoci', ['new', '--image', `${layout}:base`]);
  image(layout, work, 'app', 'amd64', 'app\n');
  image(layout, work, 'broken', 'amd64', 'broken\n');
  image(layout, work, 'amd', 'amd64', 'amd64 variant\n');
  image(layout, work, 'arm', 'arm64', 'arm64 variant\n');
  const indexPath = join(layout, 'index.json');
  const index = JSON.parse(readFileSync(indexPath, 'utf8'));
  const byTag = (tag: string) => {
    const d = index.manifests.find((m: any) => m.annotations?.['org.opencontainers.image.ref.name'] === tag);
    return { mediaType: d.mediaType, digest: d.digest, size: d.size };
  };
  const multi = JSON.stringify({
    schemaVersion: 2,
    mediaType: 'application/vnd.oci.image.index.v1+json',
    manifests: [
      { ...byTag('arm'), platform: { architecture: 'arm64', os: 'linux' } },
      { ...byTag('amd'), platform: { architecture: 'amd64', os: 'linux' } },
    ],
  });
  const blob = writeBlob(layout, multi);
  index.manifests.push({
    mediaType: 'application/vnd.oci.image.index.v1+json',
    ...blob,
    annotations: { 'org.opencontainers.image.ref.name': 'multi' },
  });
  writeFileSync(indexPath, JSON.stringify(index));
  return { dir: layout, remove: () => rmSync(work, { recursive: true, force: true }) };
}

export interface PushOptions {
  format?: 'v2s2' | 'oci';
  all?: boolean;
  creds?: string;
}

/**
 * `skopeo copy` of one layout tag to `host/repo:tag` over plain HTTP. Async:
 * a token server in the test process must keep answering while skopeo runs.
 */
export async function push(layout: Layout, tag: string, dest: string, opts: PushOptions = {}): Promise<void> {
  const args = ['--insecure-policy', 'copy', '--quiet', '--dest-tls-verify=false'];
  if (opts.format) args.push('--format', opts.format);
  if (opts.all) args.push('--all');
  if (opts.creds) args.push('--dest-creds', opts.creds);
  args.push(`oci:${layout.dir}:${tag}`, `docker://${dest}`);
  await promisify(execFile)('skopeo', args, { timeout: 60_000 });
}

/** The manifest of an image as the registry serves it (for digests in assertions). */
export async function inspectRaw(ref: string, creds?: string): Promise<any> {
  const args = ['--insecure-policy', 'inspect', '--raw', '--tls-verify=false'];
  if (creds) args.push('--creds', creds);
  const { stdout } = await promisify(execFile)('skopeo', [...args, `docker://${ref}`], { timeout: 60_000 });
  return JSON.parse(stdout);
}
