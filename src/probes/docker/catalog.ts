import { DockerStepError, type RegistryClient } from './client.ts';
import { header, nextLink, statusLine } from './http.ts';

/** Upper bounds so a huge registry cannot turn one check into an unbounded crawl. */
const MAX_PAGES = 100;
export const MAX_IMAGES = 1_000;

async function pages(client: RegistryClient, step: string, first: string, scope: string, key: 'repositories' | 'tags'): Promise<string[]> {
  const out: string[] = [];
  let url: string | undefined = `${client.base}${first}`;
  for (let page = 0; url && page < MAX_PAGES; page++) {
    const res = await client.request(step, url, 'GET', scope, { accept: 'application/json' }, true);
    if (res.status !== 200) {
      const what = step === 'catalog' ? `the registry refused the catalog (${statusLine(res)})` : `${first} answered ${statusLine(res)}`;
      throw new DockerStepError(step, what);
    }
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(res.body!.toString('utf8'));
    } catch {
      throw new DockerStepError(step, `${first} did not answer JSON`);
    }
    const items = body[key];
    if (Array.isArray(items)) out.push(...items.filter((x): x is string => typeof x === 'string'));
    url = nextLink(header(res.headers, 'link'), client.base);
  }
  return out;
}

/** Repositories under `namespace` (all when empty), through `/v2/_catalog` and its `Link` pages. */
export async function listRepositories(client: RegistryClient, namespace: string): Promise<string[]> {
  const all = await pages(client, 'catalog', '/v2/_catalog?n=1000', 'registry:catalog:*', 'repositories');
  return all.filter((repo) => !namespace || repo === namespace || repo.startsWith(`${namespace}/`)).sort();
}

/** Tags of one repository, through `tags/list` and its `Link` pages. */
export async function listTags(client: RegistryClient, repository: string): Promise<string[]> {
  return pages(client, 'tags', `/v2/${repository}/tags/list?n=1000`, `repository:${repository}:pull`, 'tags');
}
