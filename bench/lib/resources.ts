import { Agent, request } from 'undici';

/**
 * Creates `count` resources through the public API, 8 requests in flight on
 * kept-alive connections (as a CI script adding resources would); `bodyOf(i)`
 * is the i-th body. Throws on the first refusal. Resolves with the seconds taken.
 */
export async function createResources(url: string, key: string, count: number, bodyOf: (i: number) => object): Promise<number> {
  const api = new Agent({ connections: 8 });
  const started = Date.now();
  let next = 0;
  try {
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < count) {
          const i = next++;
          const res = await request(`${url}/api/resources`, {
            method: 'POST',
            dispatcher: api,
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
            body: JSON.stringify(bodyOf(i)),
          });
          const text = await res.body.text();
          if (res.statusCode !== 200) throw new Error(`create ${i}: ${res.statusCode} ${text}`);
        }
      }),
    );
  } finally {
    await api.close();
  }
  return (Date.now() - started) / 1000;
}
