import { Agent, request } from 'undici';

/** Items per batch request: the endpoint's limit. */
const BATCH = 10_000;
/** Batches in flight: one is parsed and checked while another is written. */
const IN_FLIGHT = 2;

/**
 * Creates `count` resources through `POST /admin/api/resources/batch`, 10,000 per request and
 * two requests in flight (as `monctl apply` of a large file would); `bodyOf(i)` is the i-th
 * create body. Throws on the first refused batch. Resolves with the seconds taken.
 */
export async function createResources(url: string, key: string, count: number, bodyOf: (i: number) => object): Promise<number> {
  const api = new Agent({ connections: IN_FLIGHT, bodyTimeout: 600_000, headersTimeout: 600_000 });
  const started = Date.now();
  let next = 0;
  try {
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (next < count) {
          const from = next;
          next = Math.min(count, next + BATCH);
          const items = [];
          for (let i = from; i < next; i++) items.push({ op: 'create', resource: bodyOf(i) });
          const res = await request(`${url}/admin/api/resources/batch`, {
            method: 'POST',
            dispatcher: api,
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
            body: JSON.stringify({ items }),
          });
          const text = await res.body.text();
          if (res.statusCode !== 200) throw new Error(`create ${from}..${next - 1}: ${res.statusCode} ${text.slice(0, 2000)}`);
        }
      }),
    );
  } finally {
    await api.close();
  }
  return (Date.now() - started) / 1000;
}
