import { createHash } from 'node:crypto';
import { DockerStepError, type RegistryClient } from './client.ts';
import { header, type RegistryResponse, statusLine } from './http.ts';

export const OCI_INDEX = 'application/vnd.oci.image.index.v1+json';
export const OCI_MANIFEST = 'application/vnd.oci.image.manifest.v1+json';
export const DOCKER_LIST = 'application/vnd.docker.distribution.manifest.list.v2+json';
export const DOCKER_MANIFEST = 'application/vnd.docker.distribution.manifest.v2+json';
const ACCEPT = [OCI_INDEX, OCI_MANIFEST, DOCKER_LIST, DOCKER_MANIFEST].join(', ');
const IMAGE_TYPES = new Set([OCI_MANIFEST, DOCKER_MANIFEST]);
const INDEX_TYPES = new Set([OCI_INDEX, DOCKER_LIST]);

interface Descriptor {
  mediaType?: string;
  digest: string;
  platform?: { os?: string; architecture?: string; variant?: string };
}
interface Manifest {
  mediaType?: string;
  manifests?: Descriptor[];
  config?: Descriptor;
  layers?: Descriptor[];
}

export interface PullSummary {
  digest: string;
  blobs: number;
  platform?: string;
}

/** The platform checked inside an index, like `docker pull` on a linux/amd64 host. */
export const PLATFORM = { os: 'linux', architecture: 'amd64' };

function mediaTypeOf(res: RegistryResponse, manifest?: Manifest): string {
  return (header(res.headers, 'content-type') ?? '').split(';')[0].trim() || manifest?.mediaType || '';
}

/** HEAD the manifest, then its body from the digest cache or a GET (digest verified). */
async function manifest(client: RegistryClient, repository: string, reference: string, scope: string, step: string) {
  const path = `/v2/${repository}/manifests/${reference}`;
  const head = await client.request(step, path, 'HEAD', scope, { accept: ACCEPT });
  if (head.status === 404) throw new DockerStepError(step, `${repository}:${reference} not found (404)`);
  if (head.status !== 200) throw new DockerStepError(step, `HEAD ${repository}:${reference} answered ${statusLine(head)}`);
  const digest = header(head.headers, 'docker-content-digest') ?? (reference.startsWith('sha256:') ? reference : undefined);
  const cached = digest ? (client.opts.state.manifests.get(digest) as { type: string; body: Manifest } | undefined) : undefined;
  if (cached) return { digest: digest!, type: cached.type, body: cached.body };
  const res = await client.request(step, `/v2/${repository}/manifests/${digest ?? reference}`, 'GET', scope, { accept: ACCEPT }, true);
  if (res.status !== 200) throw new DockerStepError(step, `GET ${repository}@${digest ?? reference} answered ${statusLine(res)}`);
  const actual = `sha256:${createHash('sha256').update(res.body!).digest('hex')}`;
  if (digest?.startsWith('sha256:') && actual !== digest)
    throw new DockerStepError(step, `manifest digest mismatch: expected ${digest}, got ${actual}`);
  let body: Manifest;
  try {
    body = JSON.parse(res.body!.toString('utf8'));
  } catch {
    throw new DockerStepError(step, `manifest of ${repository}:${reference} is not JSON`);
  }
  const type = mediaTypeOf(res, body);
  client.opts.state.manifests.set(actual, { type, body });
  return { digest: digest ?? actual, type, body };
}

/** HEAD a blob, following redirects (to storage backends) without the registry's credentials. */
async function headBlob(client: RegistryClient, repository: string, digest: string, scope: string): Promise<void> {
  let url = `${client.base}/v2/${repository}/blobs/${digest}`;
  const origin = new URL(url).origin;
  for (let hop = 0; hop <= 5; hop++) {
    const sameOrigin = new URL(url).origin === origin;
    const res = sameOrigin ? await client.request('blob', url, 'HEAD', scope) : await client.plain('blob', url, 'HEAD');
    if (res.status >= 300 && res.status < 400 && header(res.headers, 'location')) {
      url = new URL(header(res.headers, 'location')!, url).toString();
      continue;
    }
    if (res.status === 200) return;
    throw new DockerStepError('blob', `blob ${digest.slice(0, 19)}… of ${repository} answered ${statusLine(res)}`);
  }
  throw new DockerStepError('blob', `blob ${digest.slice(0, 19)}… of ${repository}: more than 5 redirects`);
}

async function each<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await fn(items[next++]);
  });
  await Promise.all(workers);
}

/**
 * The pullability check of one image: manifest (and the linux/amd64 manifest
 * of an index), then the config and every layer blob. Throws DockerStepError.
 */
export async function checkImage(client: RegistryClient, repository: string, reference: string): Promise<PullSummary> {
  const scope = `repository:${repository}:pull`;
  const top = await manifest(client, repository, reference, scope, 'manifest');
  let image = top;
  let platform: string | undefined;
  if (INDEX_TYPES.has(top.type) || (!top.type && top.body.manifests)) {
    const entries = top.body.manifests ?? [];
    const match = entries.find((m) => m.platform?.os === PLATFORM.os && m.platform?.architecture === PLATFORM.architecture);
    if (!match) {
      const found = entries.map((m) => `${m.platform?.os ?? '?'}/${m.platform?.architecture ?? '?'}`).join(', ') || 'none';
      throw new DockerStepError('platform', `no ${PLATFORM.os}/${PLATFORM.architecture} manifest in the index (found: ${found})`);
    }
    platform = `${PLATFORM.os}/${PLATFORM.architecture}`;
    image = await manifest(client, repository, match.digest, scope, 'platform manifest');
  }
  if (!IMAGE_TYPES.has(image.type) && !(image.body.config && image.body.layers)) {
    throw new DockerStepError('manifest', `unsupported manifest media type "${image.type || 'none'}"`);
  }
  const blobs = [image.body.config!, ...(image.body.layers ?? [])].map((d) => d.digest).filter(Boolean);
  await each(blobs, 4, (digest) => headBlob(client, repository, digest, scope));
  return { digest: top.digest, blobs: blobs.length, platform };
}
