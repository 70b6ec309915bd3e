import { request } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  text: string;
}

/** A GET that keeps the body as sent (compressed or not) and also gives it decoded as text. */
export function getRaw(base: string, path: string, headers: Record<string, string> = {}): Promise<RawResponse> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        const enc = res.headers['content-encoding'];
        const plain = enc === 'br' ? brotliDecompressSync(body) : enc === 'gzip' ? gunzipSync(body) : body;
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text: plain.toString('utf8') });
      });
    });
    req.on('error', reject);
    req.end();
  });
}
