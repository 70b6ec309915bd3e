import type { Dispatchers } from '../dispatchers.ts';
import type { ProbeResult } from '../types.ts';
import { listRepositories, listTags, MAX_IMAGES } from './catalog.ts';
import { DockerStepError, RegistryClient } from './client.ts';
import { checkImage } from './image.ts';
import { parseImageReference, parseNamespace } from './reference.ts';
import type { RegistryState } from './state.ts';

export type CredentialLookup = (registry: string) => Promise<{ username: string; password: string } | undefined>;

export interface DockerDeps {
  dispatchers: Dispatchers;
  state: RegistryState;
  timeoutMs: number;
  credential: CredentialLookup;
}

type Outcome = Omit<ProbeResult, 'durationMs' | 'checkedAt'>;

function failure(err: unknown): Outcome {
  if (err instanceof DockerStepError) {
    return { status: err.rateLimited ? 'UNKNOWN' : 'NOT_AVAILABLE', message: err.message, errorCode: 'DOCKER_ERROR' };
  }
  return { status: 'NOT_AVAILABLE', message: `check: ${(err as Error)?.message ?? String(err)}`, errorCode: 'DOCKER_ERROR' };
}

async function client(deps: DockerDeps, registry: string, endpoint: string, skipTLS: boolean): Promise<RegistryClient> {
  let credential;
  try {
    credential = await deps.credential(registry);
  } catch (err) {
    throw new DockerStepError('auth', `cannot read stored credentials: ${(err as Error).message}`);
  }
  const c = new RegistryClient({
    registry,
    endpoint,
    skipTLS,
    credential,
    dispatcher: deps.dispatchers.raw(skipTLS),
    timeoutMs: deps.timeoutMs,
    state: deps.state,
  });
  await c.ping();
  return c;
}

/** Is the image pullable: every manifest and blob a `docker pull` would fetch is there. */
export async function probeDocker(target: string, skipTLS: boolean, recursive: boolean, deps: DockerDeps): Promise<Outcome> {
  try {
    if (recursive) return await probeNamespace(target, skipTLS, deps);
    let ref;
    try {
      ref = parseImageReference(target);
    } catch (err) {
      throw new DockerStepError('reference', (err as Error).message);
    }
    const c = await client(deps, ref.registry, ref.endpoint, skipTLS);
    const summary = await checkImage(c, ref.repository, ref.reference);
    const where = summary.platform ? ` for ${summary.platform}` : '';
    return {
      status: 'AVAILABLE',
      message: `pullable: ${ref.repository}:${ref.reference}${where} (${summary.digest.slice(0, 19)}…, ${summary.blobs} blobs)`,
      errorCode: null,
    };
  } catch (err) {
    return failure(err);
  }
}

/** Every tag of every repository under the namespace must pull. */
async function probeNamespace(target: string, skipTLS: boolean, deps: DockerDeps): Promise<Outcome> {
  const ns = parseNamespace(target);
  const c = await client(deps, ns.registry, ns.endpoint, skipTLS);
  const repositories = await listRepositories(c, ns.namespace);
  const images: string[] = [];
  for (const repo of repositories) {
    for (const tag of await listTags(c, repo)) images.push(`${repo}:${tag}`);
    if (images.length >= MAX_IMAGES) break;
  }
  const where = ns.namespace ? `${ns.registry}/${ns.namespace}` : ns.registry;
  if (images.length === 0) throw new DockerStepError('catalog', `no images found under ${where}`);
  const checked = images.slice(0, MAX_IMAGES);
  const failed: string[] = [];
  let rateLimited = 0;
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(4, checked.length) }, async () => {
      while (next < checked.length) {
        const image = checked[next++];
        const colon = image.lastIndexOf(':');
        try {
          await checkImage(c, image.slice(0, colon), image.slice(colon + 1));
        } catch (err) {
          if (err instanceof DockerStepError && err.rateLimited) rateLimited++;
          failed.push(`${image} (${err instanceof DockerStepError ? err.message : String(err)})`);
        }
      }
    }),
  );
  const ok = checked.length - failed.length;
  if (failed.length === 0)
    return { status: 'AVAILABLE', message: `${ok} of ${checked.length} images pull under ${where}`, errorCode: null };
  failed.sort();
  if (failed.length > 10) failed.splice(10, failed.length - 10, `and ${failed.length - 10} more`);
  const status = rateLimited === failed.length ? 'UNKNOWN' : 'NOT_AVAILABLE';
  return {
    status,
    message: `${ok} of ${checked.length} images pull under ${where}; failed: ${failed.join('; ')}`,
    errorCode: 'DOCKER_ERROR',
  };
}
