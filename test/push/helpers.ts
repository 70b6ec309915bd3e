import { request } from 'node:http';
import { operations } from '../../src/api/operations.ts';
import type { TestDaemon } from '../helpers/daemon.ts';

export interface PingResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

export interface PingOptions {
  method?: string;
  body?: string | Buffer;
  headers?: Record<string, string>;
  /** The client's address (any of 127.0.0.0/8): another client, as the daemon sees it. */
  localAddress?: string;
}

/** One request to a ping URL, the path sent exactly as given; resolves with the answer (errors too). */
export function ping(base: string, path: string, opts: PingOptions = {}): Promise<PingResponse> {
  const url = new URL(base);
  const headers: Record<string, string | number> = { ...opts.headers };
  if (opts.body !== undefined) headers['content-length'] = Buffer.byteLength(opts.body);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, method: opts.method ?? 'GET', path, headers, agent: false, localAddress: opts.localAddress },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

export interface PushResource {
  id: number;
  uuid: string;
  slug: string;
}

/** Creates a PUSH resource (a period of an hour unless said otherwise) and reads its ping uuid from the admin view. */
export async function createPush(d: TestDaemon, name: string, extra: Record<string, unknown> = {}): Promise<PushResource> {
  const created = await d.admin.call(operations.createResource, {
    body: { name, resourceType: 'PUSH', periodSeconds: 3600, ...extra } as never,
  });
  const admin = await d.admin.call(operations.getAdminResource, { params: { id: created.id } });
  const push = (admin as { push: { uuid: string; slug: string } | null }).push!;
  return { id: created.id, uuid: push.uuid, slug: push.slug };
}

/** The resource's history, newest first, with each entry's `ping`. */
export async function historyOf(d: TestDaemon, id: number): Promise<any[]> {
  return (await d.admin.call(operations.getResourceHistory, { params: { id }, query: { limit: 100 } })) as any[];
}
