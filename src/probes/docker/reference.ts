/**
 * Image references, `[registry[:port]/]path[:tag|@digest]`, resolved the way
 * Docker does: a first component with a dot, a colon or `localhost` names the
 * registry, otherwise Docker Hub (`library/` for single-name images).
 */
export interface ImageReference {
  /** As the user and stored credentials name it: `127.0.0.1:5000`, `ghcr.io`, `docker.io`. */
  registry: string;
  /** host[:port] actually contacted (`registry-1.docker.io` for Docker Hub). */
  endpoint: string;
  repository: string;
  /** Tag or digest; `latest` when neither is given. */
  reference: string;
}

const HUB = 'docker.io';
const HUB_ENDPOINT = 'registry-1.docker.io';

function splitRegistry(text: string): { registry: string; rest: string } {
  const slash = text.indexOf('/');
  const first = slash < 0 ? '' : text.slice(0, slash);
  if (first && (first.includes('.') || first.includes(':') || first === 'localhost' || first.startsWith('['))) {
    return { registry: first, rest: text.slice(slash + 1) };
  }
  return { registry: HUB, rest: text };
}

function endpointOf(registry: string): string {
  return registry === HUB || registry === 'index.docker.io' || registry === 'registry-1.docker.io' ? HUB_ENDPOINT : registry;
}

export function parseImageReference(target: string): ImageReference {
  const { registry, rest } = splitRegistry(target.trim());
  let repository = rest;
  let reference = 'latest';
  const at = rest.indexOf('@');
  if (at >= 0) {
    repository = rest.slice(0, at);
    reference = rest.slice(at + 1);
  } else {
    const colon = rest.lastIndexOf(':');
    if (colon > rest.lastIndexOf('/')) {
      repository = rest.slice(0, colon);
      reference = rest.slice(colon + 1);
    }
  }
  if (registry === HUB && !repository.includes('/')) repository = `library/${repository}`;
  if (!/^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*$/.test(repository)) {
    throw new Error(`invalid image reference "${target}"`);
  }
  return { registry, endpoint: endpointOf(registry), repository, reference };
}

/** A recursive target: a registry and a namespace under it (empty = the whole registry). */
export function parseNamespace(target: string): { registry: string; endpoint: string; namespace: string } {
  const text = target.trim().replace(/\/+$/, '');
  const hasRegistry = !text.includes('/') ? /[.:]|^localhost$|^\[/.test(text) : undefined;
  if (hasRegistry) return { registry: text, endpoint: endpointOf(text), namespace: '' };
  const { registry, rest } = splitRegistry(text);
  return { registry, endpoint: endpointOf(registry), namespace: rest.replace(/:[^/]*$/, '') };
}

/** True for `localhost`, 127.0.0.0/8 and ::1: Docker treats those registries as insecure (plain HTTP allowed). */
export function isLoopbackHost(endpoint: string): boolean {
  const host = endpoint.startsWith('[') ? endpoint.slice(1, endpoint.indexOf(']')) : endpoint.replace(/:\d+$/, '');
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}
