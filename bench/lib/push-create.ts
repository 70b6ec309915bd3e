import { Agent, request } from 'undici';

export interface CreatedPush {
  id: number;
  uuid: string;
  /** The deadline plus grace of its admin view right after creation (epoch ms). */
  lateAt: number;
}

/**
 * Creates PUSH resources through the API for bench:push, `concurrency` at a time on
 * kept-alive connections: each a `POST /api/resources` (whose answer is the public view)
 * and a `GET /admin/api/resources/{id}` for the ping uuid and the deadline, one call each,
 * as a CI script adding checks would. `onCreated` sees each one as soon as it exists, so that
 * pings can start while the rest is created. Throws on the first refusal; resolves with the
 * seconds taken.
 */
export async function createPushChecks(
  url: string,
  adminKey: string,
  count: number,
  concurrency: number,
  bodyOf: (i: number) => object,
  onCreated: (i: number, created: CreatedPush) => void,
): Promise<number> {
  const api = new Agent({ connections: concurrency, headersTimeout: 120_000, bodyTimeout: 120_000 });
  const headers = { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' };
  const call = async (method: 'GET' | 'POST', path: string, body?: object) => {
    const res = await request(url + path, { method, dispatcher: api, headers, body: body && JSON.stringify(body) });
    const text = await res.body.text();
    if (res.statusCode !== 200 && res.statusCode !== 201) throw new Error(`${method} ${path}: ${res.statusCode} ${text}`);
    return JSON.parse(text);
  };
  const started = performance.now();
  let next = 0;
  try {
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < count) {
          const i = next++;
          const { id } = await call('POST', '/api/resources', bodyOf(i));
          const { push } = await call('GET', `/admin/api/resources/${id}`);
          if (!push?.uuid || !push.lateAt) throw new Error(`resource ${id} has no push view: ${JSON.stringify(push)}`);
          onCreated(i, { id, uuid: push.uuid, lateAt: Date.parse(push.lateAt) });
        }
      }),
    );
  } finally {
    await api.close();
  }
  return (performance.now() - started) / 1000;
}
